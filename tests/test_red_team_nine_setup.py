"""Red team nine (M): one-click setup and the files it writes (2026-12-06).

Each test reproduces a route by which `connect` / `disconnect` / `clients` (the CLI, run as a real
child process with a temporary HOME, as a person runs it) or the functions the tray and uninstall
share with it harm a real user's `claude_desktop_config.json`, or fail without plain words. Each
test asserts what should happen, so it FAILS while the route is open.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from app.core.claude import config as cc
from app.core.claude import locations as cl
from app.core.paths import HOME_ENV

OTHER_SERVERS = {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada"]},
    "weather": {"command": "uvx", "args": ["weather-mcp"], "env": {"API_KEY": "s3cr\u00e9t"}},
}
USER_CONFIG = {
    "globalShortcut": "Alt+Space",
    "preferences": {"quickEntryDictationShortcut": "capslock", "zoom": 1.25},
    "mcpServers": OTHER_SERVERS,
    "isUsingBuiltInNodeForMcp": True,
}


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def config(user_home: Path) -> Path:
    """Claude Desktop's file on Linux for this HOME (its folder makes Claude Desktop 'installed')."""
    path = user_home / ".config" / "Claude" / "claude_desktop_config.json"
    path.parent.mkdir(parents=True)
    return path


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR")}
    env["HOME"] = str(home)
    env[HOME_ENV] = str(home / "cowork-data")
    return env


def cli(home: Path, *args: str, preexec=None) -> subprocess.CompletedProcess[str]:
    """`cowork-terminal ARGS` as a person runs it, for Claude Desktop's file only."""
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env=env_for(home), capture_output=True, text=True, timeout=120, cwd=Path(__file__).parent.parent,
        preexec_fn=preexec,
    )  # fmt: skip


def backups(path: Path) -> list[Path]:
    return cc.list_backups(path)


# --- 1. a program saving the file in place at the same moment: the whole file is lost -----------------


def test_connect_while_another_program_saves_the_file_in_place_loses_the_users_whole_config(
    user_home: Path, config: Path
) -> None:
    """Attack: a program saves claude_desktop_config.json in place (open with O_TRUNC, then write:
    Node's fs.writeFile, nano, vim with backupcopy=yes) and `connect` runs between its truncate and
    its write. connect reads 0 bytes, takes the empty file for `{}` (tests/test_client_config.py
    accepts that for an empty file alone), backs up the 0 bytes, finds the file still empty at its
    last check, and renames a new file over it; the other program's write then goes into the old,
    unlinked inode. Achieved: the file holds only our entry; the user's preferences and every other
    MCP server (with its API key) are gone, from the file and from every backup."""
    original = json.dumps(USER_CONFIG, indent=2).encode()
    config.write_bytes(original)
    # The fix (config_file.EMPTY_REREAD_DELAY_S): a file that reads empty is read again after a
    # moment. The other program's write lands well within it (after 50 ms), as a save does; a file
    # still empty after that is taken for `{}` (test_client_config's empty-file case).
    with open(config, "wb") as saver:  # the other program's save: truncated, its bytes not written yet
        finish = threading.Timer(0.05, lambda: (saver.write(original), saver.flush()))
        finish.start()
        try:
            cc.connect_desktop(config, cc.build_entry(False, sys.executable))
        finally:
            finish.join()
    kept = [config.read_bytes()] + [b.read_bytes() for b in backups(config)]
    assert any(b'"globalShortcut"' in raw and b'"weather"' in raw for raw in kept), (
        "the user's preferences and other servers are in neither the file nor any backup: " + config.read_text()
    )
    assert "cowork-terminal" in json.loads(config.read_bytes())["mcpServers"]


# --- 2. a full disk while the backup is written: a cut-short .bak is left behind -----------------------


def test_a_backup_cut_short_by_a_full_disk_is_left_behind_as_if_it_were_a_good_one(
    user_home: Path, config: Path
) -> None:
    """Attack: the disk fills while connect writes its backup (the backup is as large as the config;
    simulated exactly with RLIMIT_FSIZE, as tests/test_client_config.py does for the temporary file,
    but here the config is larger than the space left, so the backup write is the one cut short).
    config_file.save only removes a backup it got back from _write_backup; when _write_backup itself
    fails, the partly written file stays. Achieved: the error says "The file was not changed" (true),
    but the folder now holds `claude_desktop_config.json.<time>.bak` with the first 1,000 bytes of the
    config: the newest backup, named like a good one, is broken JSON (restoring it breaks Claude
    Desktop), and it counts as one of the five kept, pruning a good one."""
    padding = {f"server{i:03d}": {"command": "npx", "args": ["-y", f"pkg-{i}"]} for i in range(40)}
    original = json.dumps({**USER_CONFIG, "mcpServers": {**OTHER_SERVERS, **padding}}, indent=2).encode()
    assert len(original) > 2000
    config.write_bytes(original)
    script = textwrap.dedent(
        """
        import resource, signal, runpy, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed, as ENOSPC would be
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
        sys.argv = ["cowork-terminal", "connect", "--client", "claude-desktop"]
        runpy.run_module("app", run_name="__main__")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        env=env_for(user_home),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parent.parent,
    )
    assert "not changed" in result.stderr, result.stderr
    assert config.read_bytes() == original
    left = [(b.name, b.stat().st_size) for b in backups(config)]
    assert left == [], f"a cut-short backup was left behind (config is {len(original)} bytes): {left}"


# --- 3. a hard-linked config (dotfiles kept by hard link) is silently cut off ---------------------------


def test_a_hard_linked_config_is_cut_off_from_its_other_name(user_home: Path, config: Path) -> None:
    """Attack: the user keeps the config in a dotfiles folder by hard link (`ln ~/dotfiles/claude.json
    ~/.config/Claude/claude_desktop_config.json`, as some dotfiles managers and backup tools do).
    save() follows a symlink on purpose ("replacing the link with a plain file would silently cut it
    off from its target") but write_atomic renames a new inode over a hard link. Achieved: after
    connect the two names are two different files; the dotfiles copy silently no longer has what
    Claude Desktop's file has (and the user's next dotfiles sync puts the old file back, without us)."""
    dotfiles = user_home / "dotfiles" / "claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(json.dumps(USER_CONFIG, indent=2))
    os.link(dotfiles, config)
    result = cli(user_home, "connect", "--client", "claude-desktop")
    assert result.returncode == 0, result.stderr
    assert "cowork-terminal" in json.loads(config.read_text())["mcpServers"]
    assert config.stat().st_ino == dotfiles.stat().st_ino, "the hard link was replaced by a new file"
    assert "cowork-terminal" in json.loads(dotfiles.read_text())["mcpServers"]


# --- 4. run as root (sudo), the user's own file becomes root's ------------------------------------------


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="needs root to own files as another user")
def test_connect_run_as_root_takes_the_users_config_away_from_the_user(user_home: Path, config: Path) -> None:
    """Attack: the person runs `sudo -E cowork-terminal connect` (or any sudo that keeps HOME; root's
    os.access says yes to everything). save() keeps the mode but not the owner: write_atomic's
    mkstemp file is root's and is renamed over the user's. Achieved: the user's 0600 config is now
    owned by root, mode 0600: Claude Desktop, running as the user, can no longer read or save its own
    config (nor can the user's next `cowork-terminal connect` or disconnect)."""
    user = 65534  # nobody: stands for the person who owns the file
    config.write_text(json.dumps(USER_CONFIG, indent=2))
    os.chmod(config, 0o600)
    for path in (user_home, user_home / ".config", config.parent, config):
        os.chown(path, user, user)
    result = cli(user_home, "connect", "--client", "claude-desktop")
    assert result.returncode == 0, result.stderr
    info = config.stat()
    assert (info.st_uid, info.st_gid) == (user, user), (
        f"the user's config is now owned by uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):o}"
    )


# --- 5. a deeply nested value: a Python traceback, and the tray's status and repair raise --------------


def nested_config(depth: int = 2000) -> str:
    return json.dumps({"mcpServers": OTHER_SERVERS})[:-1] + ', "layout": ' + "[" * depth + "]" * depth + "}"


def test_a_deeply_nested_config_gives_a_traceback_instead_of_plain_words(user_home: Path, config: Path) -> None:
    """Attack: a config with a value nested 2,000 deep (valid JSON; Claude Desktop's JSON.parse reads
    it). parse_config catches JSONDecodeError and its own _Unwritable, not the RecursionError Python's
    json raises past ~1,000 levels (the same class of gap as the 4,300-digit integer fixed on
    2026-12-05). Achieved: `connect`, `disconnect`, `clients` and `uninstall --dry-run` each end in a Python traceback
    ("RecursionError: maximum recursion depth exceeded while decoding a JSON array") instead of
    "is not a valid Claude config ... Nothing was changed"."""
    config.write_text(nested_config())
    for args in (
        ["connect", "--client", "claude-desktop"],
        ["disconnect", "--client", "claude-desktop"],
        ["clients"],
        ["uninstall", "--dry-run"],
    ):
        result = cli(user_home, *args)
        assert "Traceback" not in result.stderr, f"`{' '.join(args)}`:\n{result.stderr[-400:]}"


def test_a_deeply_nested_config_breaks_the_trays_status_and_start_up_repair(user_home: Path, config: Path) -> None:
    """The same file, seen by the functions the tray calls: client_status (the menu and the watcher
    that tells the person when an entry turns --headless, claude_watch.refresh) is meant to report
    INVALID for an unreadable file (it catches CoworkError only); stale_entries.repair_stale_entries
    (the tray's first_look) skips a client whose file raises CoworkError only. Achieved: both raise
    RecursionError, so the tray's refresh and its start-up steps after the repair do not run."""
    from app.core.install import stale_entries

    config.write_text(nested_config())
    location = next(
        loc
        for loc in cl.locate_clients("linux", {"HOME": str(user_home)}, user_home, cl.real_exists)
        if loc.client_id == cl.CLAUDE_DESKTOP
    )
    wanted = cc.build_entry(False, sys.executable)
    try:
        status = cc.client_status(location, wanted)
    except RecursionError as exc:
        pytest.fail(f"client_status raised {exc!r} instead of reporting the file as unreadable")
    assert status.state == cc.INVALID
    try:
        stale_entries.repair_stale_entries(
            frozen=False, executable=sys.executable, platform="linux", environ={"HOME": str(user_home)}, home=user_home
        )
    except RecursionError as exc:
        pytest.fail(f"repair_stale_entries raised {exc!r}")


# --- 6. connect then disconnect does not give the file back as it was ----------------------------------


def test_connect_then_disconnect_does_not_give_back_the_file_as_it_was(user_home: Path, config: Path) -> None:
    """Steps: a config as a Windows user's editor left it (4-space indent, CRLF line ends, an escaped
    character), `connect`, then `disconnect`. Every change is re-rendered by render_config (2-space
    indent, LF, characters unescaped). Achieved: the user's file is reformatted for good; the JSON
    value is the same, every byte of layout is not (a diff in a dotfiles repo shows every line
    changed). Cosmetic: nothing of the value is lost."""
    original = json.dumps(USER_CONFIG, indent=4).replace("\n", "\r\n").encode() + b"\r\n"
    config.write_bytes(original)
    assert cli(user_home, "connect", "--client", "claude-desktop").returncode == 0
    assert cli(user_home, "disconnect", "--client", "claude-desktop").returncode == 0
    assert json.loads(config.read_bytes()) == USER_CONFIG  # the value survives
    assert config.read_bytes() == original, config.read_bytes()[:120]


# --- 7. a save by Claude Desktop while our temporary file is flushed is undone ----------------------------


def test_a_save_by_another_program_while_our_new_file_is_flushed_is_silently_undone(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: Claude Desktop (or the user) saves the config after save() made its last check
    (refuse_if_changed) but before os.replace: write_atomic only starts after that check, and it
    creates, writes and fsyncs the temporary file first; an fsync takes milliseconds to seconds on a
    busy or slow disk (a network home, a USB stick). Here the other program's save (an atomic rename,
    Claude-style) is made to land during that fsync. Achieved: no ConfigChangedError, no retry: our
    rename puts back the old content plus our entry, and the other program's change (`newPref`, or a
    server the user just added) is silently lost, in neither the file nor a backup."""
    config.write_text(json.dumps(USER_CONFIG, indent=2))
    real_fsync = os.fsync
    saved: list[bool] = []

    def fsync_while_claude_saves(fd: int) -> None:
        if not saved:
            saved.append(True)
            theirs = config.with_name("claude-writes.tmp")
            theirs.write_text(json.dumps({**USER_CONFIG, "newPref": "set by Claude Desktop"}, indent=2))
            os.replace(theirs, config)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_while_claude_saves)
    with contextlib.suppress(cc.ConfigChangedError):  # refusing is fine too: their save must survive
        cc.connect_desktop(config, cc.build_entry(False, sys.executable))
    monkeypatch.undo()
    assert saved, "the other program's save did not happen during the write"
    kept = [config.read_text()] + [b.read_text() for b in backups(config)]
    assert any("newPref" in text for text in kept), "the other program's save is gone: " + config.read_text()


# --- 8. a config that is not a regular file: a device node is replaced, a FIFO hangs everything ----------


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="needs root to make a device node")
def test_a_config_linked_to_a_device_node_gets_the_device_replaced_by_a_file(user_home: Path, config: Path) -> None:
    """Attack: the config is a symlink to /dev/null (a usual way to make a program forget what it
    saves), and connect runs as root (sudo -E). save() resolves the link, checks only the permission
    bits (0666: writable), backs up into the device's folder and renames a regular file over the
    device. Here the device is a copy of /dev/null made with mknod in the test's folder (the real one
    is never touched). Achieved: the character device is replaced by a regular JSON file (for the real
    /dev/null: every program that writes to /dev/null would write into that file)."""
    device = user_home / "dev" / "null"
    device.parent.mkdir()
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    config.symlink_to(device)
    result = cli(user_home, "connect", "--client", "claude-desktop")
    assert stat.S_ISCHR(os.lstat(device).st_mode), (
        f"the device node is now a regular file (connect exit {result.returncode}): {device.read_text()[:80]!r}"
    )


def test_a_config_that_is_a_fifo_makes_clients_hang_forever(user_home: Path, config: Path) -> None:
    """Attack: a named pipe where the config should be (a secrets tool that serves files through
    FIFOs, or a mistaken `mkfifo`). read_config reads it with Path.read_bytes, which blocks until a
    writer comes, and there is none. Achieved: `cowork-terminal clients` (and connect, disconnect,
    uninstall's plan, the tray's claude_watch.refresh, which call the same read) never return, with
    no word to the person; the test gives it 20 s."""
    os.mkfifo(config)
    try:
        result = cli_with_timeout(user_home, 20, "clients")
    except subprocess.TimeoutExpired:
        pytest.fail("`cowork-terminal clients` still had not returned after 20 s (blocked reading the FIFO)")
    assert result.returncode == 0


def cli_with_timeout(home: Path, seconds: float, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env=env_for(home), capture_output=True, text=True, timeout=seconds, cwd=Path(__file__).parent.parent,
    )  # fmt: skip


# --- 9. the tray's start-up repair drops settings the user put in the entry, and does not say so ---------


def test_the_trays_start_up_repair_drops_the_users_entry_settings_without_saying_so(
    user_home: Path, config: Path
) -> None:
    """Steps: the user's Claude Desktop entry runs an older copy of the app (the .deb removed, the
    .tar.gz unpacked elsewhere) and carries a setting they added in `env` (COWORK_TERMINAL_BASH, a
    documented setting: Homebrew's bash on macOS). The tray's first look (repair_stale_entries,
    no click) rewrites the entry with connect_client(replace=True), which keeps `--headless` but
    not `env` (config.updated_entry). Achieved: the setting is gone from the file, and the notice the
    person reads says only "it now starts this copy", unlike the start-at-login repair, which names
    what it dropped ("with settings Cowork Terminal did not write (...); it now starts ... without
    them"). Only a backup (one of five, pruned after five more saves) still has it."""
    from app.core.install import stale_entries

    old_copy = "/opt/cowork-terminal/cowork-terminal"  # removed with the .deb
    this_copy = "/home/ann/Applications/cowork-terminal/cowork-terminal"
    added = {"COWORK_TERMINAL_BASH": "/opt/homebrew/bin/bash"}
    config.write_text(
        json.dumps({"mcpServers": {"cowork-terminal": {"command": old_copy, "args": ["serve"], "env": added}}})
    )
    environ = {"XDG_CONFIG_HOME": str(user_home / ".config"), "PATH": "/nonexistent"}
    repairs = stale_entries.repair_stale_entries(
        frozen=True, executable=this_copy, platform="linux", environ=environ, home=user_home,
        exists=lambda path: False,
    )  # fmt: skip
    [repair] = [r for r in repairs if r.what == "Claude Desktop"]
    entry = json.loads(config.read_text())["mcpServers"]["cowork-terminal"]
    assert entry["command"] == this_copy
    kept = (entry.get("env") or {}).get("COWORK_TERMINAL_BASH") == added["COWORK_TERMINAL_BASH"]
    told = "COWORK_TERMINAL_BASH" in repair.notice
    assert kept or told, f"dropped without a word; the person read: {repair.notice!r}"
    assert "which no longer exists" in repair.notice, "why it was repaired is still said"


def test_the_start_up_repair_of_an_entry_with_nothing_dropped_is_worded_as_before(
    user_home: Path, config: Path
) -> None:
    """The look-alike: `--headless` is kept across the repair, so nothing is named as dropped."""
    from app.core.install import stale_entries

    old_copy, this_copy = "/opt/cowork-terminal/cowork-terminal", "/home/ann/cowork-terminal/cowork-terminal"
    config.write_text(
        json.dumps({"mcpServers": {"cowork-terminal": {"command": old_copy, "args": ["serve", "--headless"]}}})
    )
    environ = {"XDG_CONFIG_HOME": str(user_home / ".config"), "PATH": "/nonexistent"}
    repairs = stale_entries.repair_stale_entries(
        frozen=True, executable=this_copy, platform="linux", environ=environ, home=user_home,
        exists=lambda path: False,
    )  # fmt: skip
    [repair] = [r for r in repairs if r.what == "Claude Desktop"]
    assert repair.why == stale_entries.MISSING and "which no longer exists" in repair.notice
    assert json.loads(config.read_text())["mcpServers"]["cowork-terminal"]["args"] == ["serve", "--headless"]


# --- 10. a file the user does not own: the advice given cannot work ---------------------------------------


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="needs root to run the CLI as another user")
def test_a_config_owned_by_someone_else_gets_advice_that_cannot_work() -> None:
    """Steps: the config in the user's own folder belongs to root, mode 0644 (what route 4, a
    `sudo -E cowork-terminal connect`, leaves; or a file restored by root from a backup); the user
    runs `cowork-terminal connect`. save() refuses (may_replace: os.access says not writable), rightly,
    but says the file "is read-only" and to "chmod u+w": the owner's write bit is already set, and
    the user may not chmod a file they do not own ("Operation not permitted"). Achieved: the person
    is told a wrong cause and a fix that fails; the words should name the owner (`sudo chown`)."""
    import shutil
    import tempfile

    user = 65534
    top = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        os.chmod(top, 0o755)
        home = top / "home"
        config = home / ".config" / "Claude" / "claude_desktop_config.json"
        config.parent.mkdir(parents=True)
        for path in (home, home / ".config", config.parent):
            os.chown(path, user, user)
        config.write_text(json.dumps(USER_CONFIG, indent=2))
        os.chmod(config, 0o644)  # root's, as sudo left it; u+w is set

        # A child process that is the user (a fork: this Python lives under /root, which the user may not
        # enter), running the same connect the CLI runs; it sends back what the person would read.
        import encodings.utf_8_sig  # noqa: F401 - the stdlib under /root is out of the user's reach

        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            try:
                os.setgroups([])
                os.setgid(user)
                os.setuid(user)
                try:
                    cc.connect_desktop(config, cc.build_entry(False, sys.executable))
                    said = "connected"
                except Exception as exc:  # noqa: BLE001 - the words are what the test looks at
                    said = f"{type(exc).__name__}: {exc}"
                os.write(write_end, said.encode())
            finally:
                os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            said = pipe.read().decode()
        os.waitpid(pid, 0)
        assert said.startswith("ConfigWriteError") and "not changed" in said, said
        assert os.access(config, os.W_OK)  # root may write it: the file itself is not read-only
        assert "chmod u+w" not in said and "owner" in said.lower(), said
    finally:
        shutil.rmtree(top)
