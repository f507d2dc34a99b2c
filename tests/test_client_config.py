"""Our entry in Claude's configs: built right, written without losing a byte of anything else."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path, PurePosixPath

import pytest

from app.core.claude import config as cc
from app.core.claude.locations import ClientLocation
from app.core.paths import HOME_ENV
from tests.fake_claude import claude_calls, install_fake_claude, user_servers, write_user_servers

PYTHON = "/opt/cowork/venv/bin/python"
ENTRY = cc.build_entry(False, PYTHON)
OTHER_SERVERS = {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada"]},
    "weather": {"command": "uvx", "args": ["weather-mcp"], "env": {"API_KEY": "s3cr\u00e9t"}},
}
# A realistic file: preferences before and after mcpServers, nested values, floats, unicode, null.
RICH_CONFIG = {
    "globalShortcut": "Alt+Space",
    "preferences": {"quickEntryDictationShortcut": "capslock", "zoom": 1.25, "menuBarEnabled": False},
    "mcpServers": OTHER_SERVERS,
    "isUsingBuiltInNodeForMcp": True,
    "\u00e9t\u00e9": ["\u2603", None, 3, -0.5, {"deep": {"er": []}}],
}


def backups(path: Path) -> list[Path]:
    return cc.list_backups(path)


def stray_temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.endswith(".tmp")]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return tmp_path / "Claude" / "claude_desktop_config.json"


def write(path: Path, data: bytes | str) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    path.write_bytes(raw)
    return raw


# --- the entry -----------------------------------------------------------------------------


def test_entry_from_source_runs_this_python_with_dash_m_app_serve():
    assert cc.build_entry(False, PYTHON) == {"command": PYTHON, "args": ["-I", "-m", "app", "serve"]}


def test_entry_of_a_bundle_runs_the_executable_with_serve_and_the_chosen_arguments():
    exe = r"C:\Program Files\Cowork Terminal\Cowork Terminal.exe"
    assert cc.build_entry(True, exe, ["--headless"]) == {"command": exe, "args": ["serve", "--headless"]}


def test_entry_carries_the_app_home_in_env_when_one_is_set():
    entry = cc.build_entry(False, PYTHON, home="/data/ct")
    assert entry["env"] == {HOME_ENV: "/data/ct"}


def test_this_app_entry_uses_the_unresolved_absolute_interpreter_and_absolute_home(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    entry = cc.this_app_entry(["--headless"], environ={HOME_ENV: "rel/home"})
    assert entry["command"] == os.path.abspath(sys.executable)  # a venv symlink stays a symlink
    assert entry["args"] == ["-I", "-m", "app", "serve", "--headless"]
    assert entry["env"] == {HOME_ENV: str(tmp_path / "rel" / "home")}
    assert "env" not in cc.this_app_entry(environ={})


def test_this_app_entry_when_frozen_runs_the_bundle(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert cc.this_app_entry(environ={})["args"] == ["serve"]


@pytest.mark.parametrize(
    ("existing", "state"),
    [
        (None, cc.ABSENT),
        (ENTRY, cc.CURRENT),
        ({"command": PYTHON, "args": ["-m", "app", "serve", "--headless"]}, cc.CHANGED),
        ({"command": "/old/venv/bin/python", "args": ["-m", "app", "serve"]}, cc.STALE),
        ({"command": r"C:\Old\Cowork Terminal.exe", "args": ["serve"]}, cc.STALE),
        ({"command": "/usr/local/bin/cowork-terminal", "args": ["serve", "--headless"]}, cc.STALE),
        ({"command": "npx", "args": ["-y", "cowork-terminal-mcp"]}, cc.FOREIGN),
        ({"command": "cmd", "args": ["/c", "npx", "cowork-terminal-mcp"]}, cc.FOREIGN),
        ({"command": "/usr/bin/other", "args": ["serve"]}, cc.FOREIGN),
        ({"url": "https://example.com/mcp"}, cc.FOREIGN),
        ("not an object", cc.FOREIGN),
    ],
)
def test_existing_entries_are_classified(existing, state):
    assert cc.classify_entry(existing, ENTRY) == state


# --- connect into each kind of file ------------------------------------------------------------


def test_connect_into_a_missing_file_creates_folder_and_private_file(config):
    change = cc.connect_desktop(config, ENTRY)
    assert change.action == "written" and change.previous == cc.ABSENT and change.backup is None
    assert json.loads(config.read_text("utf-8")) == {"mcpServers": {"cowork-terminal": ENTRY}}
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert backups(config) == []


@pytest.mark.parametrize("content", [b"", b"  \n\t\n"])
def test_connect_into_an_empty_file_treats_it_as_an_empty_object(config, content):
    write(config, content)
    cc.connect_desktop(config, ENTRY)
    assert json.loads(config.read_text("utf-8")) == {"mcpServers": {"cowork-terminal": ENTRY}}
    assert [b.read_bytes() for b in backups(config)] == [content]


def test_connect_keeps_every_other_key_and_server_in_order(config):
    original = write(config, json.dumps(RICH_CONFIG, indent=4, ensure_ascii=False))
    os.chmod(config, 0o644)
    cc.connect_desktop(config, ENTRY)
    after = json.loads(config.read_text("utf-8"))
    expected = json.loads(original)
    expected["mcpServers"]["cowork-terminal"] = ENTRY
    assert after == expected
    assert list(after) == list(RICH_CONFIG)
    assert list(after["mcpServers"]) == [*OTHER_SERVERS, "cowork-terminal"]
    assert after["preferences"]["zoom"] == 1.25 and after["\u00e9t\u00e9"][0] == "\u2603"
    assert "\u2603" in config.read_text("utf-8")  # written as UTF-8, not \\u escapes
    assert stat.S_IMODE(config.stat().st_mode) == 0o644  # an existing file keeps its permissions
    [backup] = backups(config)
    assert backup.read_bytes() == original and stat.S_IMODE(backup.stat().st_mode) == 0o600


def test_connect_adds_mcp_servers_at_the_end_when_the_file_has_none(config):
    write(config, '{"globalShortcut": "x", "b": 1}')
    cc.connect_desktop(config, ENTRY)
    assert list(json.loads(config.read_text("utf-8"))) == ["globalShortcut", "b", "mcpServers"]


def test_connect_replaces_our_entry_in_place_without_moving_it(config):
    servers = {
        "a": {"command": "a"},
        "cowork-terminal": {"command": PYTHON, "args": ["-m", "app", "serve", "--headless"]},
    }
    write(config, json.dumps({"mcpServers": {**servers, "z": {"command": "z"}}}))
    change = cc.connect_desktop(config, ENTRY)
    assert change.previous == cc.CHANGED  # same executable, other options: no --replace needed
    assert list(json.loads(config.read_text("utf-8"))["mcpServers"]) == ["a", "cowork-terminal", "z"]


USER_SETTING = {"COWORK_TERMINAL_BASH": "/opt/homebrew/bin/bash"}  # the README's documented setting


def test_an_entry_that_is_ours_plus_a_setting_of_the_app_it_never_writes_is_altered_and_connect_drops_it(config):
    """COWORK_TERMINAL_BASH in the entry names the program commands run through: only what the app
    writes itself counts as ours (a program may have put the other there)."""
    ours = {**ENTRY, "env": USER_SETTING}
    write(config, json.dumps({"mcpServers": {"cowork-terminal": ours}}))
    assert cc.classify_entry(ours, ENTRY) == cc.ALTERED
    assert cc.added_to_entry(ours, ENTRY) == ["env COWORK_TERMINAL_BASH"]
    change = cc.connect_desktop(config, ENTRY)
    assert (change.action, change.previous) == ("written", cc.ALTERED)
    assert cc.desktop_entry(config) == ENTRY


@pytest.mark.parametrize(
    ("old_command", "old_args", "replace"),
    [(PYTHON, ["-m", "app", "serve", "--headless"], False), ("/old/install/bin/python3", ["-m", "app", "serve"], True)],
)
def test_updating_our_entry_writes_only_what_the_app_writes_and_takes_the_new_app_home(
    config, old_command, old_args, replace
):
    old = {"command": old_command, "args": old_args, "env": {**USER_SETTING, HOME_ENV: "/old/home"}, "note": "mine"}
    write(config, json.dumps({"mcpServers": {"cowork-terminal": old}}))
    wanted = cc.build_entry(False, PYTHON, home="/new/home")
    cc.connect_desktop(config, wanted, replace=replace)
    written = json.loads(config.read_text("utf-8"))["mcpServers"]["cowork-terminal"]
    assert written == {"command": PYTHON, "args": ["-I", "-m", "app", "serve"], "env": {HOME_ENV: "/new/home"}}
    cc.connect_desktop(config, cc.build_entry(False, PYTHON))  # connected again from the default home
    assert "env" not in json.loads(config.read_text("utf-8"))["mcpServers"]["cowork-terminal"]


def test_replacing_another_programs_entry_takes_none_of_its_settings(config):
    foreign = {**FOREIGN_ENTRY, "env": {"TOKEN": "theirs"}}
    write(config, json.dumps({"mcpServers": {"cowork-terminal": foreign}}))
    cc.connect_desktop(config, ENTRY, replace=True)
    assert json.loads(config.read_text("utf-8"))["mcpServers"]["cowork-terminal"] == ENTRY


def test_connect_reads_a_file_with_a_utf8_bom_and_writes_it_back_without(config):
    original = write(config, b"\xef\xbb\xbf" + json.dumps(RICH_CONFIG).encode("utf-8"))
    cc.connect_desktop(config, ENTRY)
    raw = config.read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf")
    assert {k: v for k, v in json.loads(raw).items() if k != "mcpServers"} == {
        k: v for k, v in RICH_CONFIG.items() if k != "mcpServers"
    }
    assert backups(config)[0].read_bytes() == original


def test_connect_reads_a_utf16_file_as_powershell_writes_it(config):
    write(config, json.dumps({"mcpServers": OTHER_SERVERS}).encode("utf-16"))
    cc.connect_desktop(config, ENTRY)
    assert json.loads(config.read_bytes())["mcpServers"] == {**OTHER_SERVERS, "cowork-terminal": ENTRY}


# --- files we refuse to touch ----------------------------------------------------------------


def assert_untouched(config: Path, original: bytes) -> None:
    assert config.read_bytes() == original
    assert backups(config) == [] and stray_temp_files(config.parent) == []


@pytest.mark.parametrize(
    ("content", "line", "column", "words"),
    [
        ('{\n  "a": 1,\n  "mcpServers": {"x": {"command": "y"},}\n}\n', 3, 40, "double quotes"),
        ('{\n  // my servers\n  "mcpServers": {}\n}', 2, 3, "double quotes"),
        ('{"mcpServers": {}', 1, 18, "delimiter"),
        ('{"mcpServers": {}}\n{"again": 1}', 2, 1, "Extra data"),
    ],
)
def test_invalid_json_is_refused_untouched_with_line_and_column(config, content, line, column, words):
    original = write(config, content)
    with pytest.raises(cc.ConfigFileError) as caught:
        cc.connect_desktop(config, ENTRY, replace=True)
    error = caught.value
    assert (error.path, error.line, error.column) == (config, line, column)
    message = str(error)
    assert str(config) in message and f"line {line}, column {column}" in message and words in message
    assert "Nothing was changed" in message and "text editor" in message
    assert_untouched(config, original)


@pytest.mark.parametrize(
    ("content", "line", "column"),
    [
        ('{\n  "x": 1,\n  "mcpServers": [\n    "cowork-terminal"\n  ]\n}', 3, 17),
        ('{"mcpServers": null}', 1, 16),
        ('{"mcpServers": "none"}', 1, 16),
    ],
)
def test_mcp_servers_that_is_not_an_object_is_refused_at_its_position(config, content, line, column):
    original = write(config, content)
    with pytest.raises(cc.ConfigFileError, match=r'"mcpServers" must be an object') as caught:
        cc.connect_desktop(config, ENTRY)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert_untouched(config, original)


def test_a_top_level_array_is_refused(config):
    original = write(config, '\n  [{"mcpServers": {}}]')
    with pytest.raises(cc.ConfigFileError, match=r"one JSON object") as caught:
        cc.connect_desktop(config, ENTRY)
    assert (caught.value.line, caught.value.column) == (2, 3)
    assert_untouched(config, original)


def test_a_duplicated_key_is_refused_because_rewriting_would_drop_one(config):
    original = write(config, '{"mcpServers": {\n  "a": {"command": "1"},\n  "a": {"command": "2"}\n}}')
    with pytest.raises(cc.ConfigFileError, match=r"'a' appears twice") as caught:
        cc.connect_desktop(config, ENTRY)
    assert (caught.value.line, caught.value.column) == (3, 8)
    assert_untouched(config, original)


def test_a_duplicated_key_spelled_with_an_escape_is_refused_at_its_place(config):
    original = write(config, '{"mcpServers": {}, "a": 1, "\\u0061": 2}')
    with pytest.raises(cc.ConfigFileError, match=r"'a' appears twice.*line 1, column 38"):
        cc.connect_desktop(config, ENTRY)
    assert_untouched(config, original)


@pytest.mark.parametrize(
    ("content", "problem", "line", "column"),
    [
        ('{"mcpServers": {},\n  "zoom": NaN}', "NaN is not valid JSON", 2, 11),
        ('{"mcpServers": {},\n "n": "NaN", "m": NaN}', "NaN is not valid JSON", 2, 19),
        ('{"m": -Infinity}', "-Infinity is not valid JSON", 1, 7),
        ('{"mcpServers": {},\n  "big": 1e400}', "the number 1e400 is too large", 2, 10),
    ],
)
def test_numbers_that_would_not_survive_a_rewrite_are_refused(config, content, problem, line, column):
    """Python reads these, but NaN is no JSON and 1e400 would come back as Infinity."""
    original = write(config, content)
    with pytest.raises(cc.ConfigFileError, match=problem) as caught:
        cc.connect_desktop(config, ENTRY)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert_untouched(config, original)


def test_bytes_that_are_not_utf8_are_refused_with_their_line(config):
    original = write(config, b'{\n  "name": "caf\xe9"\n}')  # Latin-1, as an old editor might save it
    with pytest.raises(cc.ConfigFileError, match=r"bytes that are not UTF-8 text \(") as caught:
        cc.connect_desktop(config, ENTRY)
    assert (caught.value.line, caught.value.column) == (2, 15)
    assert_untouched(config, original)


def test_a_config_path_that_is_a_folder_gives_a_clear_error(config):
    config.mkdir(parents=True)
    with pytest.raises(cc.ConfigWriteError, match="cannot read"):
        cc.connect_desktop(config, ENTRY)


# --- entries that are not ours ---------------------------------------------------------------


STALE_ENTRY = {"command": "/old/install/bin/python3", "args": ["-m", "app", "serve"]}
FOREIGN_ENTRY = {"command": "npx", "args": ["-y", "cowork-terminal-mcp"]}


@pytest.mark.parametrize(("existing", "words"), [(STALE_ENTRY, "older install"), (FOREIGN_ENTRY, "another program")])
def test_an_entry_that_is_not_ours_is_reported_and_kept_without_replace(config, existing, words):
    original = write(config, json.dumps({"mcpServers": {"cowork-terminal": existing, "x": {"command": "x"}}}))
    with pytest.raises(cc.EntryConflictError, match=words) as caught:
        cc.connect_desktop(config, ENTRY)
    assert json.dumps(existing) in str(caught.value) and "--replace" in str(caught.value)
    assert_untouched(config, original)


@pytest.mark.parametrize(("existing", "state"), [(STALE_ENTRY, cc.STALE), (FOREIGN_ENTRY, cc.FOREIGN)])
def test_replace_swaps_in_our_entry_and_keeps_the_old_one_in_the_backup(config, existing, state):
    original = write(config, json.dumps({"mcpServers": {"cowork-terminal": existing, "x": {"command": "x"}}}))
    change = cc.connect_desktop(config, ENTRY, replace=True)
    assert (change.previous, change.previous_entry) == (state, existing)
    assert json.loads(config.read_text("utf-8"))["mcpServers"] == {"cowork-terminal": ENTRY, "x": {"command": "x"}}
    assert Path(change.backup).read_bytes() == original


# --- read-only, locked and failing writes --------------------------------------------------------


def test_a_read_only_file_is_refused_even_for_root(config):
    """We check the permission bits ourselves: as root, or on POSIX where a rename replaces a
    read-only file anyway, the OS alone would not stop the write."""
    original = write(config, json.dumps({"mcpServers": OTHER_SERVERS}))
    os.chmod(config, 0o444)
    with pytest.raises(cc.ConfigWriteError, match=r"read-only.*not changed.*chmod u\+w"):
        cc.connect_desktop(config, ENTRY)
    assert_untouched(config, original)


@pytest.fixture
def immutable(config: Path):
    """Mark the config immutable with `chattr +i`: the kernel then refuses to replace it, root or not.

    This is the honest "locked file" on Linux (root ignores permission bits); skipped where the
    file system or the container does not allow it.
    """
    original = write(config, json.dumps({"mcpServers": OTHER_SERVERS}))
    if subprocess.run(["chattr", "+i", str(config)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    yield original
    subprocess.run(["chattr", "-i", str(config)], check=True)


def test_a_file_the_os_refuses_to_replace_gives_a_clear_error_and_leaves_nothing_behind(config, immutable):
    # An immutable file is one nobody may write (os.access): refused before anything is written.
    with pytest.raises(cc.ConfigWriteError, match=r"read-only, so it was not changed"):
        cc.connect_desktop(config, ENTRY)
    assert_untouched(config, immutable)  # the backup made before the failed write is gone again


def test_a_write_that_fails_half_way_leaves_the_file_whole(config, cli_env):
    """A real short write: the file-size limit (RLIMIT_FSIZE) stops the temporary file at 300 bytes,
    as a full disk would. The original, the folder and the backups stay as they were."""
    original = write(config, json.dumps({"mcpServers": {"a": {"command": "a"}}}))
    assert len(original) < 300
    script = textwrap.dedent(
        f"""
        import resource, signal
        from pathlib import Path
        from app.core.claude import config as cc
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))
        entry = cc.build_entry(False, "/x" * 200)
        try:
            cc.connect_desktop(Path({str(config)!r}), entry)
        except cc.ConfigWriteError as exc:
            print(exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], env=cli_env, capture_output=True, text=True, check=True)
    assert "File too large" in out.stdout and "not changed" in out.stdout
    assert_untouched(config, original)


# --- idempotence, backups, symlinks ----------------------------------------------------------------


def test_connecting_twice_changes_nothing_the_second_time(config):
    write(config, json.dumps({"mcpServers": OTHER_SERVERS}))
    cc.connect_desktop(config, ENTRY)
    first = (config.read_bytes(), config.stat().st_mtime_ns, backups(config))
    change = cc.connect_desktop(config, ENTRY)
    assert change.action == "unchanged" and change.previous == cc.CURRENT and change.backup is None
    assert (config.read_bytes(), config.stat().st_mtime_ns, backups(config)) == first


def test_backups_keep_only_the_newest_five(config):
    write(config, json.dumps({"round": -1}))
    for round_number in range(8):
        cc.disconnect_desktop(config, ENTRY)  # nothing to remove: no backup
        data = json.loads(config.read_text("utf-8"))
        data["round"] = round_number
        config.write_text(json.dumps(data))
        cc.connect_desktop(config, ENTRY)
        cc.disconnect_desktop(config, ENTRY)
    kept = backups(config)
    assert len(kept) == cc.BACKUPS_KEPT
    rounds_with_entry = [
        (json.loads(b.read_bytes())["round"], "cowork-terminal" in json.loads(b.read_bytes()).get("mcpServers", {}))
        for b in kept
    ]
    assert rounds_with_entry == [(5, True), (6, False), (6, True), (7, False), (7, True)]
    assert [b.name for b in kept] == sorted(b.name for b in kept)


def test_backup_names_carry_a_utc_timestamp_that_sorts(config):
    name = cc.backup_path(config, 1_785_587_353_000_000_042).name
    assert name == "claude_desktop_config.json.20260801-122913-000000042.bak"


def test_unrelated_files_in_the_folder_are_never_pruned(config):
    write(config, "{}")
    for keep in ("claude_desktop_config.json.bak", "claude_desktop_config.json.mine.bak", "notes.txt"):
        (config.parent / keep).write_text("mine")
    for _ in range(7):
        cc.connect_desktop(config, ENTRY)
        cc.disconnect_desktop(config, ENTRY)
    names = {p.name for p in config.parent.iterdir()}
    assert {"claude_desktop_config.json.bak", "claude_desktop_config.json.mine.bak", "notes.txt"} <= names


def test_a_symlinked_config_stays_a_symlink(tmp_path, config):
    target = tmp_path / "dotfiles" / "claude.json"
    write(target, json.dumps({"mcpServers": OTHER_SERVERS}))
    config.parent.mkdir(parents=True)
    config.symlink_to(target)
    cc.connect_desktop(config, ENTRY)
    assert config.is_symlink()
    assert "cowork-terminal" in json.loads(target.read_text("utf-8"))["mcpServers"]


# --- disconnect ------------------------------------------------------------------------------------


def test_disconnect_removes_only_our_entry(config):
    original = dict(RICH_CONFIG)
    original["mcpServers"] = {
        "filesystem": OTHER_SERVERS["filesystem"],
        "cowork-terminal": ENTRY,
        "weather": OTHER_SERVERS["weather"],
    }
    write(config, json.dumps(original))
    change = cc.disconnect_desktop(config, ENTRY)
    assert (change.action, change.previous, change.previous_entry) == ("removed", cc.CURRENT, ENTRY)
    after = json.loads(config.read_text("utf-8"))
    assert after == RICH_CONFIG and list(after) == list(RICH_CONFIG)
    assert list(after["mcpServers"]) == ["filesystem", "weather"]


def test_disconnect_refuses_another_programs_entry_under_our_name_as_connect_does(config):
    original = write(config, json.dumps({"mcpServers": {"cowork-terminal": FOREIGN_ENTRY}}))
    with pytest.raises(cc.EntryConflictError, match="runs another program") as caught:
        cc.disconnect_desktop(config, ENTRY)
    assert json.dumps(FOREIGN_ENTRY) in str(caught.value) and "--replace" in str(caught.value)
    assert_untouched(config, original)


def test_disconnect_removes_an_older_installs_entry(config):
    write(config, json.dumps({"mcpServers": {"cowork-terminal": STALE_ENTRY}}))
    change = cc.disconnect_desktop(config, ENTRY)
    assert (change.action, change.previous) == ("removed", cc.STALE)
    assert json.loads(config.read_text("utf-8")) == {"mcpServers": {}}


def test_disconnect_with_nothing_to_remove_writes_nothing(config):
    assert cc.disconnect_desktop(config, ENTRY).action == "nothing to remove"
    assert not config.parent.exists()
    original = write(config, json.dumps({"mcpServers": OTHER_SERVERS}))
    assert cc.disconnect_desktop(config, ENTRY).action == "nothing to remove"
    assert_untouched(config, original)


def test_disconnect_refuses_an_invalid_file(config):
    original = write(config, '{"mcpServers": {"cowork-terminal": {},}}')
    with pytest.raises(cc.ConfigFileError):
        cc.disconnect_desktop(config, ENTRY)
    assert_untouched(config, original)


# --- dry run -----------------------------------------------------------------------------------------


def test_dry_run_writes_nothing_and_previews_exactly_what_would_be_written(config, tmp_path):
    change = cc.connect_desktop(config, ENTRY, dry_run=True)
    assert change.action == "dry run" and not config.parent.exists()
    original = write(config, json.dumps(RICH_CONFIG))
    preview = cc.connect_desktop(config, ENTRY, dry_run=True).preview
    assert_untouched(config, original)
    cc.connect_desktop(config, ENTRY)
    assert config.read_text("utf-8") == preview
    removal = cc.disconnect_desktop(config, ENTRY, dry_run=True)
    assert json.loads(removal.preview) == RICH_CONFIG and "cowork-terminal" in config.read_text("utf-8")


# --- Claude Code, through a fake `claude` --------------------------------------------------------


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The stand-in `claude` (tests/fake_claude.py), keeping Claude Code's file in $CLAUDE_CONFIG_DIR."""
    claude = install_fake_claude(tmp_path / "bin")
    servers_file = tmp_path / "claude-config" / ".claude.json"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(servers_file.parent))

    def calls() -> list[list[str]]:
        return [call[1:] for call in claude_calls(claude.parent)]

    return str(claude), calls, lambda: user_servers(servers_file), servers_file


def added(entry: dict) -> dict:
    """An entry as `claude mcp add` writes it into Claude Code's file."""
    return {"type": "stdio", **entry, "env": {}}


def test_claude_code_connect_reads_its_file_and_runs_mcp_add_at_user_scope(fake_claude):
    claude, calls, servers, servers_file = fake_claude
    write_user_servers(servers_file, OTHER_SERVERS)
    change = cc.connect_claude_code(claude, servers_file, ENTRY)
    assert change.action == "written" and change.previous == cc.ABSENT
    assert calls() == [["mcp", "add", "--scope", "user", "cowork-terminal", "--", PYTHON, "-I", "-m", "app", "serve"]]
    assert servers() == {**OTHER_SERVERS, "cowork-terminal": added(ENTRY)}
    assert cc.claude_code_entry(servers_file) == {"type": "stdio", **ENTRY}, "the empty env it writes is none"
    assert cc.connect_claude_code(claude, servers_file, ENTRY).action == "unchanged"
    assert len(calls()) == 1, "read from the file: no `claude` run to find it connected"


def test_claude_code_entry_with_env_goes_through_add_json(fake_claude):
    claude, calls, servers, servers_file = fake_claude
    entry = cc.build_entry(False, PYTHON, home="/data/ct home")
    cc.connect_claude_code(claude, servers_file, entry)
    assert calls()[-1][:5] == ["mcp", "add-json", "--scope", "user", "cowork-terminal"]
    assert servers()["cowork-terminal"] == {"type": "stdio", **entry}
    assert cc.claude_code_entry(servers_file) == {"type": "stdio", **entry}, "exactly: a space in a path stays"
    assert cc.connect_claude_code(claude, servers_file, entry).action == "unchanged"


def test_claude_code_foreign_entry_needs_replace_then_is_removed_and_added(fake_claude):
    claude, calls, servers, servers_file = fake_claude
    write_user_servers(servers_file, {"cowork-terminal": FOREIGN_ENTRY})
    with pytest.raises(cc.EntryConflictError, match="--replace"):
        cc.connect_claude_code(claude, servers_file, ENTRY)
    assert servers() == {"cowork-terminal": FOREIGN_ENTRY}
    dry = cc.connect_claude_code(claude, servers_file, ENTRY, replace=True, dry_run=True)
    assert [argv[1:3] for argv in dry.commands] == [["mcp", "remove"], ["mcp", "add"]]
    assert servers() == {"cowork-terminal": FOREIGN_ENTRY}
    change = cc.connect_claude_code(claude, servers_file, ENTRY, replace=True)
    assert change.previous == cc.FOREIGN and servers() == {"cowork-terminal": added(ENTRY)}
    assert calls()[-2] == ["mcp", "remove", "--scope", "user", "cowork-terminal"]


def test_claude_code_update_writes_only_what_the_app_writes(fake_claude):
    claude, calls, servers, servers_file = fake_claude
    older = {**ENTRY, "args": ["-m", "app", "serve", "--headless"], "env": USER_SETTING}
    write_user_servers(servers_file, {"cowork-terminal": older})
    change = cc.connect_claude_code(claude, servers_file, ENTRY)
    assert change.previous == cc.ALTERED
    assert servers()["cowork-terminal"] == added(ENTRY)
    assert cc.connect_claude_code(claude, servers_file, ENTRY).action == "unchanged"


def test_claude_code_disconnect_runs_mcp_remove(fake_claude):
    claude, calls, servers, servers_file = fake_claude
    assert cc.disconnect_claude_code(claude, servers_file, ENTRY).action == "nothing to remove"
    assert calls() == [], "nothing to remove, read from the file"
    write_user_servers(servers_file, {"cowork-terminal": added(ENTRY), "other": FOREIGN_ENTRY})
    assert cc.disconnect_claude_code(claude, servers_file, ENTRY, dry_run=True).action == "dry run"
    assert cc.disconnect_claude_code(claude, servers_file, ENTRY).action == "removed"
    assert servers() == {"other": FOREIGN_ENTRY}
    assert calls()[-1] == ["mcp", "remove", "--scope", "user", "cowork-terminal"]


def test_claude_code_failure_is_reported_with_what_claude_said(fake_claude, monkeypatch):
    claude, _, servers, servers_file = fake_claude
    monkeypatch.setenv("FAKE_CLAUDE_FAIL", "add")
    with pytest.raises(cc.ClaudeCliError, match=r"mcp add.*exit 3.*fake failure"):
        cc.connect_claude_code(claude, servers_file, ENTRY)
    assert servers() == {}


def test_claude_code_that_cannot_start_is_a_clear_error(tmp_path):
    with pytest.raises(cc.ClaudeCliError, match="could not run"):
        cc.connect_claude_code(str(tmp_path / "no-such-claude"), tmp_path / ".claude.json", ENTRY)


def test_claude_code_entry_of_another_kind_counts_as_foreign_and_a_broken_file_is_named(fake_claude):
    claude, calls, _, servers_file = fake_claude
    remote = {"type": "http", "url": "https://example.com/mcp"}
    write_user_servers(servers_file, {"cowork-terminal": remote})
    assert cc.claude_code_entry(servers_file) == remote
    with pytest.raises(cc.EntryConflictError, match="another program"):
        cc.connect_claude_code(claude, servers_file, ENTRY)
    servers_file.write_text('{"numStartups": 3,')
    with pytest.raises(cc.UsageError) as broken:
        cc.claude_code_entry(servers_file)
    said = str(broken.value)
    assert said.startswith(f"{servers_file} (Claude Code's own settings) could not be read: ") and "(line 1," in said
    assert "Do not delete or rename it" in said and "rename the file to start a fresh one" not in said
    assert calls() == [] and servers_file.read_text() == '{"numStartups": 3,', "never run, never written"


# --- status of one client ------------------------------------------------------------------------------


def desktop(path: Path, installed: bool = True) -> ClientLocation:
    return ClientLocation("claude-desktop", "Claude Desktop", installed, PurePosixPath(path), None, "found")


def test_status_reports_each_state_of_a_desktop_config(config):
    assert cc.client_status(desktop(config, installed=False), ENTRY).state == cc.ABSENT
    write(config, json.dumps({"mcpServers": {"cowork-terminal": STALE_ENTRY}}))
    status = cc.client_status(desktop(config), ENTRY)
    assert (status.state, status.entry, status.config_path) == (cc.STALE, STALE_ENTRY, str(config))
    write(config, "{oops")
    broken = cc.client_status(desktop(config), ENTRY)
    assert broken.state == cc.INVALID and "line 1, column 2" in broken.problem


def test_status_of_claude_code_reads_its_file_or_is_unknown_without_its_cli(fake_claude):
    claude, calls, _, servers_file = fake_claude
    code = ClientLocation("claude-code", "Claude Code", True, None, PurePosixPath(claude), "found", "", servers_file)
    write_user_servers(servers_file, {"cowork-terminal": added(ENTRY)})
    assert cc.client_status(code, ENTRY).state == cc.CURRENT and calls() == []
    missing = ClientLocation("claude-code", "Claude Code", False, None, None, "not found", "", servers_file)
    assert cc.client_status(missing, ENTRY).state == cc.UNKNOWN
    with pytest.raises(cc.UsageError, match="not installed"):
        cc.connect_client(missing, ENTRY)


def test_connect_client_and_disconnect_client_dispatch_by_kind(config, fake_claude):
    claude, _, servers, servers_file = fake_claude
    code = ClientLocation("claude-code", "Claude Code", True, None, PurePosixPath(claude), "found", "", servers_file)
    cc.connect_client(desktop(config), ENTRY)
    cc.connect_client(code, ENTRY)
    assert "cowork-terminal" in json.loads(config.read_text("utf-8"))["mcpServers"]
    assert servers() == {"cowork-terminal": added(ENTRY)}
    cc.disconnect_client(desktop(config), ENTRY)
    cc.disconnect_client(code, ENTRY)
    assert json.loads(config.read_text("utf-8")) == {"mcpServers": {}} and servers() == {}


@pytest.mark.parametrize(
    ("env", "args", "state"),
    [
        ({"COWORK_TERMINAL_BASH": "/bin/bash"}, [], cc.ALTERED),
        ({"LANG": "de_DE.UTF-8", "LC_ALL": "C"}, [], cc.ALTERED),
        ({"PYTHONPATH": "/tmp/x"}, [], cc.ALTERED),
        ({"LD_PRELOAD": "/tmp/x.so"}, [], cc.ALTERED),
        ({"PATH": "/tmp/bin:/usr/bin"}, [], cc.ALTERED),
        ({}, ["--tools", "all", "--headless"], cc.CHANGED),
        ({}, ["--tools=all"], cc.CHANGED),
        ({}, ["--planted"], cc.ALTERED),
    ],
)
def test_an_entry_of_ours_with_an_env_key_or_argument_this_app_never_writes_is_altered(env, args, state):
    entry = {**ENTRY, "args": ENTRY["args"] + args, **({"env": env} if env else {})}
    assert cc.classify_entry(entry, ENTRY) == state
    assert (cc.added_to_entry(entry, ENTRY) == []) == (state != cc.ALTERED)


def test_connecting_over_an_altered_entry_drops_what_was_added(config):
    altered = {**ENTRY, "args": ENTRY["args"] + ["--planted"], "env": {**USER_SETTING, "PYTHONPATH": "/tmp/x"}}
    write(config, json.dumps({"mcpServers": {"cowork-terminal": altered}}))
    change = cc.connect_desktop(config, ENTRY)
    assert change.previous == cc.ALTERED and change.action == "written"
    assert cc.desktop_entry(config) == ENTRY
