"""Red team eight (D), 2026-12-05: the container, the protected set and provenance, attacked through
`execute_command` of a tray-bound server (tests/in_process_server.py `serving(home, bound=True)`):
real bash in the real bwrap container, the hub of this process as the tray. Each test asserts what
should happen and fails today because the attack works."""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import site
import sys
from pathlib import Path

import anyio
import pytest

from app.core.authority.hub import Hub
from app.core.execution import start_files
from app.core.paths import AppPaths
from tests.in_process_server import came, serving
from tests.stdio_client import run

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"),
]

# A route of this red team left open (the note of the twenty-third sitting says why): a strict xfail.
RENAMED_AWAY_LEFT = (
    "Known and left (twenty-third sitting): a rename away is not taken as a deletion on purpose (an "
    "editor's backup), so a file a job makes in its place while a command runs is kept as the user's"
)


def hidden(path: Path | str) -> str:
    """A path as an agent hides it from the classifier: only the container can stop the write."""
    return f'"$(echo {base64.b64encode(str(path).encode()).decode()} | base64 -d)"'


@pytest.fixture
def told(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """What the tray would tell the user from the watching thread (its notifier), in order."""
    said: list[tuple[str, str]] = []
    monkeypatch.setattr(start_files, "tell_user", lambda title, message: said.append((title, message)))
    return said


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The home folder the tray's runner and its commands see (HOME), with a user site worked out anew."""
    folder = tmp_path / "user"
    folder.mkdir()
    (folder / ".bashrc").write_text("alias ll='ls -l'\n")
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setattr(site, "USER_BASE", None)
    return folder


async def test_a_protected_folder_reached_through_a_symlinked_parent_cannot_be_replaced_by_a_command(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub
) -> None:
    """GNU stow folds a whole folder into one link when it is missing (`~/.config -> dotfiles/...`).
    The protected set binds each member's real path (`~/dotfiles/config/autostart`) and guards a
    member's *own* name when it is a link, but not a link on the way to it: a command replaced the
    link `~/.config` by a folder of its own (unasked, in the default mode) and wrote
    `~/.config/autostart/x.desktop` (run at the next login, outside any container) and Claude
    Desktop's `~/.config/Claude/claude_desktop_config.json` (an MCP server Claude starts outside).
    Nothing moved them aside, and later commands keep binding the old real folders."""
    real = user_home / "dotfiles" / "config"
    (real / "autostart").mkdir(parents=True)
    (user_home / ".config").symlink_to("dotfiles/config")
    config = user_home / ".config"
    evil = config / "autostart" / "x.desktop"
    claude = config / "Claude" / "claude_desktop_config.json"
    async with serving(home, bound=True) as client:
        direct = await run(client, {"command": f"echo x > {hidden(real / 'autostart' / 'direct.desktop')}"})
        moved = await run(
            client,
            {
                "command": f"mv {hidden(config)} {hidden(user_home / 'cfg-old')} && "
                f"cp -r {hidden(real)} {hidden(config)} && "
                f"printf '[Desktop Entry]\\nExec=sh -c id\\n' > {hidden(evil)} && "
                f"mkdir -p {hidden(claude.parent)} && echo '{{\"mcpServers\": {{}}}}' > {hidden(claude)}; "
                "echo done $?"
            },
        )
        await anyio.sleep(1.0)  # the watching thread has had its look
        after = await run(client, {"command": f"echo y >> {hidden(evil)}; echo $?"})
    assert "Read-only file system" in direct["stderr"], direct  # the members are bound, where they really are
    assert "done" in moved["stdout"], moved  # the attack ran, unasked (its link put back at once, or moved aside)
    assert not evil.exists(), f"{evil} was written by a command: {evil.read_text()!r} ({after['stdout']!r})"
    assert not claude.exists(), f"{claude} was written by a command"
    assert config.is_symlink() and config.resolve() == real.resolve(), "the user's link, put back"


async def test_a_background_job_cannot_write_a_protected_folder_the_user_made_anew(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub
) -> None:
    """The fix of 2026-12-05 ("nothing prepared earlier outlives a change") ends the spare and the
    session's shell when a protected folder is made anew, not a container whose command left a job
    running (`cmd &`, which lives on while the server does). A command left a loop that waits; the
    user then did `mv ~/.claude ~/.claude-old; mkdir ~/.claude` (the move the review of 2026-12-05
    used); the old container's bind went with the old folder, the new one was writable from the
    job, which wrote `~/.claude/settings.json` (hooks: programs Claude Code runs outside any
    container). Later commands are contained anew; the job's file stays. A command still running
    there (a job, the session's busy shell) is in the same place."""
    claude = user_home / ".claude"
    claude.mkdir()
    target = claude / "settings.json"
    loop = f"until echo '{{\"hooks\": {{}}}}' > {hidden(target)}; do sleep 0.1; done 2>/dev/null"
    async with serving(home, bound=True) as client:
        first = await run(client, {"command": f"({loop}) >/dev/null 2>&1 & echo started"})
        await anyio.sleep(1.0)
        assert not target.exists(), "read-only at first"
        claude.rename(user_home / ".claude-old")  # the person's own move, outside any container
        claude.mkdir()
        await run(client, {"command": "true"})  # the next command: the set is prepared anew
        written = await came(target.exists, seconds=5)
    assert "started" in first["stdout"], first
    assert not written, f"a command's job wrote {target}: {target.read_text()!r}"


async def test_bash_completions_loaded_from_the_users_data_folder_cannot_be_written_by_a_command(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub
) -> None:
    """bash-completion 2 (sourced by /etc/bash.bashrc and /etc/profile.d/bash_completion.sh in every
    interactive bash) loads `$XDG_DATA_HOME/bash-completion/completions/<program>` (or
    `$BASH_COMPLETION_USER_DIR/completions/`) into the user's shell the first time the user presses
    Tab after <program>: bash code run outside any container, as `~/.bash_completion` and
    `~/.config/bash_completion` are (both protected). The folder is not in the protected set: a
    command wrote a completion for `git` there, unasked."""
    completion = user_home / ".local" / "share" / "bash-completion" / "completions" / "git"
    code = "touch ~/pwned-by-completion; complete -o default git"
    async with serving(home, bound=True) as client:
        written = await run(
            client,
            {"command": f"mkdir -p {hidden(completion.parent)} && echo '{code}' > {hidden(completion)}; echo $?"},
        )
    # It ran, unasked; the folder it made is moved aside as it appears, so that its `mkdir -p` may fail.
    assert written["stdout"].strip().isdigit(), written
    assert not completion.exists(), f"a command wrote {completion}: {completion.read_text()!r}"


async def test_what_a_link_in_a_protected_folder_points_to_outside_the_home_folder_cannot_be_written(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, tmp_path: Path
) -> None:
    """`container.link_targets` protects what a symlink in a protected folder points to only where it
    lies in the home folder. Dotfiles kept on another disk or in a shared folder the user owns
    (`stow -d /data/dotfiles -t ~`: `~/.config/autostart/sync.desktop -> /data/dotfiles/...`) are
    left writable: a command rewrote the file the autostart entry is, unasked, and the desktop runs
    its `Exec=` at the next login, outside any container. A member that is itself such a link
    (`~/.bashrc -> /data/...`) is bound wherever it points: only links inside folders are cut short."""
    dotfiles = tmp_path / "data" / "dotfiles"
    dotfiles.mkdir(parents=True)
    target = dotfiles / "sync.desktop"
    target.write_text("[Desktop Entry]\nExec=true\n")
    autostart = user_home / ".config" / "autostart"
    autostart.mkdir(parents=True)
    (autostart / "sync.desktop").symlink_to(target)
    async with serving(home, bound=True) as client:
        written = await run(
            client, {"command": f"printf '[Desktop Entry]\\nExec=sh -c id\\n' > {hidden(target)}; echo $?"}
        )
    assert (autostart / "sync.desktop").read_text() == "[Desktop Entry]\nExec=true\n", (
        f"a command rewrote the autostart entry through its link: {written}"
    )


async def test_the_tray_never_writes_a_commands_output_into_a_protected_folder_through_a_link_it_planted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same gap as the stow test, seen from the tray: a link on the way to the app's own folders
    (`~/.cache -> ssd/cache`, a cache moved to another disk) is not guarded. A command replaced it,
    in one rename, by a link to a folder of its own where `cowork-home-outputs` (the outputs
    folder's name) links to the protected `~/.local/share/fonts`, the data folder's name linking back
    to the real one so that the journal goes on. The tray then wrote the next command's whole output
    (bytes of the command's choosing: a font file would do, which the approval prompt's fontconfig
    loads from there, whatever its name) into `~/.local/share/fonts/app-.../...log`, outside any container."""
    from app.core import data_folder
    from app.core.paths import HOME_ENV
    from tests.channel_peers import running_hub

    user_home = tmp_path / "user"
    (user_home / "ssd" / "cache").mkdir(parents=True)
    (user_home / ".cache").symlink_to("ssd/cache")
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setattr(site, "USER_BASE", None)
    home = user_home / ".cache" / "cowork-home"  # as the data folder named through ~/.cache
    monkeypatch.setenv(HOME_ENV, str(home))
    paths = data_folder.ensure(AppPaths.from_environment())
    fonts = user_home / ".local" / "share" / "fonts"
    new = user_home / "newcache"
    swap = (  # the link swapped for another in one rename: the tray never finds ~/.cache missing
        f"mkdir {hidden(new)} && ln -s {hidden('../ssd/cache/cowork-home')} {hidden(new / 'cowork-home')} && "
        f"ln -s {hidden(fonts)} {hidden(new / 'cowork-home-outputs')} && "
        f"ln -s {hidden('newcache')} {hidden(user_home / '.cache-new')} && "
        f"mv -T {hidden(user_home / '.cache-new')} {hidden(user_home / '.cache')}; echo swapped $?"
    )
    with running_hub(paths) as (_hub, _seen):
        async with serving(home, bound=True) as client:
            direct = await run(client, {"command": f"echo x > {hidden(fonts / 'direct.ttf')}"})
            swapped = await run(client, {"command": swap})
            big = await run(client, {"command": "printf 'OTTO-font-of-the-command'; head -c 200000 /dev/zero"})
    assert "Read-only file system" in direct["stderr"], direct
    assert "swapped 0" in swapped["stdout"], swapped
    written = [p for p in fonts.rglob("*") if p.is_file()]
    assert not written, f"the tray wrote {written} ({big.get('outputFile')}): {written[0].read_bytes()[:24]!r}"


@pytest.mark.skipif(shutil.which("less") is None, reason="less")
async def test_lesss_own_settings_file_cannot_be_written_by_a_command(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub
) -> None:
    """less (since 582) reads `~/.lesskey` (and `$XDG_CONFIG_HOME/lesskey`) as a source file whose `#env`
    section sets LESSOPEN, a command it runs on every file it shows: the request gate refuses
    LESSKEY* and LESSOPEN in a command's environment for that reason, but the default file is not
    in the protected set. A command wrote it, unasked; the user's next `man`, `git log` or `less`
    outside ran its code (here less itself, run as the user would, with output to a pipe)."""
    import subprocess

    lesskey = user_home / ".lesskey"
    marker = user_home / "ran-outside"
    text = base64.b64encode(f"#env\nLESSOPEN=|touch {marker}; cat %s\n".encode()).decode()
    async with serving(home, bound=True) as client:
        wrote = await run(
            client,
            {"command": f"mkdir -p {hidden(lesskey.parent)} && echo {text} | base64 -d > {hidden(lesskey)}; echo $?"},
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LESS")} | {"HOME": str(user_home)}
    env.pop("XDG_CONFIG_HOME", None)
    subprocess.run(["less", str(user_home / ".bashrc")], env=env, capture_output=True, timeout=10, check=False)
    assert not marker.exists(), f"a command's lesskey ran code outside any container ({wrote['stdout']!r})"


async def test_a_lone_protected_file_saved_by_rename_gets_no_second_name_from_a_running_job(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, told: list[tuple[str, str]]
) -> None:
    """Claude Code saves `~/.claude.json` by writing a new file and renaming it over the old one; the
    kernel then drops the read-only bind in every running container, and the watching thread binds
    the new file again (lone_files.py, live_binds.py). The docs count the few milliseconds between as
    a window for a write. A job left running by a command spent it on a hard link instead
    (`ln ~/.claude.json ~/.k`: same mount until the new bind comes), which outlives the window: every
    later command, in a fresh container, rewrote `~/.claude.json` through `~/.k`, and nothing told the
    user (`linked_members` looks only as the set is prepared). Now the member, bound again with a
    second name, gets a file of its own once the commands that had it unbound are ended
    (start_files.close_the_gap), and the user is told."""
    claude_json = user_home / ".claude.json"
    claude_json.write_text('{"mcpServers": {}}\n')
    second = user_home / ".k"
    loop = f"until ln {hidden(claude_json)} {hidden(second)} 2>/dev/null; do :; done"
    async with serving(home, bound=True) as client:
        await run(client, {"command": f"({loop}) >/dev/null 2>&1 & echo started"})
        await anyio.sleep(0.5)
        for turn in range(200):  # Claude saving its file, as it does many times a session
            new = user_home / f".claude.json.tmp.{turn}"
            new.write_text('{"mcpServers": {}}\n')
            new.rename(claude_json)
            await anyio.sleep(0.02)
            if second.exists():
                break
        # The watching thread's look, after it bound the file again (tens of ms; more under load: a
        # command in that time can still write through the link, as docs/security.md says).
        await came(lambda: claude_json.stat().st_nlink == 1, seconds=10)
        later = await run(
            client, {"command": f'echo \'{{"mcpServers": {{"x": {{"command": "sh"}}}}}}\' > {hidden(second)}; echo $?'}
        )
    assert second.exists(), "the job made its link (else this test proves nothing)"
    assert claude_json.read_text() == '{"mcpServers": {}}\n', (
        f"a later command rewrote ~/.claude.json through a hard link a job made "
        f"({later['stdout']!r}, after {turn + 1} saves)"
    )
    assert claude_json.stat().st_nlink == 1 and '"x"' in second.read_text(), "the link keeps the old file"
    assert any(str(claude_json) in message and "second name" in message for _title, message in told), told


async def test_a_job_that_links_a_lone_protected_file_again_at_each_save_is_ended(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, told: list[tuple[str, str]]
) -> None:
    """The separation is itself a swap over the member, which opens the same gap in the containers
    that had it, and its copy is made beside it: a job that links it again each time (or opens the
    copy: a review, 2026-12-06) would keep its way. The containers that had it unbound are ended
    before the copy is made."""
    from app.core.policy.approval import ApprovalMode
    from tests.agent_scripts import agent_script

    hub.set_settings(approval_mode=ApprovalMode.NEVER.value)  # the person's own choice: only the OS stops it
    claude_json = user_home / ".claude.json"
    claude_json.write_text('{"mcpServers": {}}\n')
    beat = user_home / "beat"
    job = (
        "import os, sys, time\n"
        "member, second, beat = sys.argv[1:]\n"
        "made = 0\n"
        "while True:\n"
        "    try:\n"
        "        os.link(member, f'{second}{made}')\n"
        "        made += 1\n"
        "    except OSError:\n"
        "        pass\n"
        "    with open(beat, 'w') as out:\n"
        "        out.write(str(time.time()))\n"
        "    time.sleep(0.0005)\n"
    )
    args = (str(claude_json), str(user_home / ".k"), str(beat))
    async with serving(home, bound=True) as client:
        started = await run(client, {"command": agent_script(job, background=True, args=args)})
        assert await came(beat.exists, seconds=10), started
        for turn in range(100):  # Claude saving its file, until the job is gone
            new = user_home / f".claude.json.tmp.{turn}"
            new.write_text('{"mcpServers": {}}\n')
            new.rename(claude_json)
            await anyio.sleep(0.1)
            last = beat.stat().st_mtime
            await anyio.sleep(0.3)
            if beat.stat().st_mtime == last:
                break
    assert beat.stat().st_mtime == last, f"the job still runs after {turn + 1} saves"
    assert turn + 1 <= 5, f"ended only after {turn + 1} saves"
    assert claude_json.read_text() == '{"mcpServers": {}}\n'
    assert any("second name" in message for _title, message in told), told


async def test_a_job_that_links_a_lone_protected_file_cannot_open_the_copy_that_separates_it(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, told: list[tuple[str, str]]
) -> None:
    """A review, 2026-12-06: the copy that separates the member is made beside it, in the home folder;
    a job that had made its link opened the copy before the swap and wrote the member through it, and
    the user was told it was safe. The containers that had the member unbound are ended first now."""
    from app.core.policy.approval import ApprovalMode
    from tests.agent_scripts import agent_script

    hub.set_settings(approval_mode=ApprovalMode.NEVER.value)  # the person's own choice: only the OS stops it
    claude_json = user_home / ".claude.json"
    claude_json.write_text('{"mcpServers": {}}\n')
    beat = user_home / "beat"
    job = (
        "import os, sys, time\n"
        "member, home, beat = sys.argv[1:]\n"
        "open(beat, 'w').write('up')\n"
        "linked, end = False, time.time() + 30\n"
        "while time.time() < end:\n"
        "    if not linked:\n"
        "        try:\n"
        "            os.link(member, home + '/.k')\n"
        "            linked = True\n"
        "            open(beat, 'w').write('linked')\n"
        "        except OSError:\n"
        "            continue\n"
        "    for name in os.listdir(home):\n"
        "        if name.startswith('.claude.json.') and name.endswith('.cowork-terminal'):\n"
        "            try:\n"
        "                fd = os.open(os.path.join(home, name), os.O_WRONLY)\n"
        "            except OSError:\n"
        "                continue\n"
        "            time.sleep(1.5)\n"
        '            os.pwrite(fd, b\'{"mcpServers": {"x": {"command": "sh"}}}\', 0)\n'
        "            open(beat, 'w').write('wrote')\n"
        "            raise SystemExit\n"
    )
    args = (str(claude_json), str(user_home), str(beat))
    async with serving(home, bound=True) as client:
        await run(client, {"command": agent_script(job, background=True, args=args)})
        await came(beat.exists, seconds=10)
        for turn in range(300):  # Claude saving its file, until the job made its link
            new = user_home / f".claude.json.tmp.{turn}"
            new.write_text('{"mcpServers": {}}\n')
            new.rename(claude_json)
            await anyio.sleep(0.02)
            if beat.read_text() != "up":
                break
        await anyio.sleep(3.0)
    assert beat.read_text() == "linked", beat.read_text()
    assert claude_json.read_text() == '{"mcpServers": {}}\n' and claude_json.stat().st_nlink == 1
    assert any("second name" in message for _title, message in told), told


async def test_a_job_that_opens_a_lone_protected_file_in_the_gap_after_a_save_is_ended(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, told: list[tuple[str, str]]
) -> None:
    """A review, 2026-12-06: no second name, a descriptor. A job tries `open(~/.claude.json, O_WRONLY)`
    in a loop (refused: read-only) until Claude saves the file by rename; in the gap before it is
    bound again the open succeeds, and the job wrote through it 1.5 s later, with nothing said. Now a
    container whose process holds the new file is ended, and the user is told."""
    from app.core.policy.approval import ApprovalMode
    from tests.agent_scripts import agent_script

    hub.set_settings(approval_mode=ApprovalMode.NEVER.value)  # the person's own choice: only the OS stops it
    claude_json = user_home / ".claude.json"
    claude_json.write_text('{"mcpServers": {}}\n')
    beat = user_home / "beat"
    job = (
        "import os, sys, time\n"
        "member, beat = sys.argv[1:]\n"
        "open(beat, 'w').write('up')\n"
        "end = time.time() + 30\n"
        "while time.time() < end:\n"
        "    try:\n"
        "        fd = os.open(member, os.O_WRONLY)\n"
        "    except OSError:\n"
        "        continue\n"
        "    if os.fstat(fd).st_nlink == 0:  # the file just replaced, mid-rename: a dead end\n"
        "        os.close(fd)\n"
        "        continue\n"
        "    open(beat, 'w').write('held')\n"
        "    time.sleep(1.5)\n"
        '    os.pwrite(fd, b\'{"mcpServers": {"x": {"command": "sh"}}}\', 0)\n'
        "    open(beat, 'w').write('wrote')\n"
        "    raise SystemExit\n"
    )
    async with serving(home, bound=True) as client:
        await run(client, {"command": agent_script(job, background=True, args=(str(claude_json), str(beat)))})
        await came(beat.exists, seconds=10)
        for turn in range(300):  # Claude saving its file, until the job got it open
            new = user_home / f".claude.json.tmp.{turn}"
            new.write_text('{"mcpServers": {}}\n')
            new.rename(claude_json)
            await anyio.sleep(0.02)
            if beat.read_text() != "up":
                break
        await anyio.sleep(3.0)
    assert beat.read_text() == "held", f"the job went on after it got the file open ({beat.read_text()})"
    assert claude_json.read_text() == '{"mcpServers": {}}\n', claude_json.read_text()
    assert any(str(claude_json) in message and "opened" in message for _title, message in told), told


async def test_a_session_bus_started_in_tmp_after_the_first_command_is_hidden_too(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub
) -> None:
    """The session buses in /tmp (`dbus-launch`'s `/tmp/dbus-XXXXXXXX`, a second session's) are
    hidden "whether or not the environment names it" (docs/security.md), but they are listed once,
    as the process's container is first prepared (`container.tmp_buses` inside the cached
    `container_for`): a bus started later (a second login, a `dbus-launch` in a terminal, a VNC
    session) stays in reach of every later command, and any bus starts the services it knows with the
    environment a client gives it. A stand-in listens where dbus-launch puts its socket; the user's
    "never ask" is set first, so that the container alone must stop the script."""
    import socket
    import tempfile

    from app.core.policy.approval import ApprovalMode
    from tests.agent_scripts import agent_script

    hub.set_settings(approval_mode=ApprovalMode.NEVER.value)  # the person's own choice, in the menu
    probe = (
        "import socket, sys\n"
        "try:\n"
        "    socket.socket(socket.AF_UNIX).connect(sys.argv[1])\n"
        "    print('reached')\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
    )
    early = tempfile.mktemp(prefix="dbus-", dir="/tmp")
    late = tempfile.mktemp(prefix="dbus-", dir="/tmp")
    listeners = []
    try:
        listeners.append(socket.socket(socket.AF_UNIX))
        listeners[-1].bind(early)
        listeners[-1].listen()
        async with serving(home, bound=True) as client:
            before = await run(client, {"command": agent_script(probe, args=(early,))})
            listeners.append(socket.socket(socket.AF_UNIX))
            listeners[-1].bind(late)  # a bus started after the container was first prepared
            listeners[-1].listen()
            after = await run(client, {"command": agent_script(probe, args=(late,))})
    finally:
        for listener in listeners:
            listener.close()
        for _ in range(2):  # a container started meanwhile makes an empty file where a hidden socket was
            for path in (early, late):
                with contextlib.suppress(OSError):
                    os.unlink(path)
            await anyio.sleep(0.5)
    assert "refused" in before["stdout"], before  # a bus there at the start is hidden
    assert "refused" in after["stdout"], f"a bus started later was reached from a command: {after}"


@pytest.mark.xfail(strict=True, reason=RENAMED_AWAY_LEFT)
async def test_a_start_up_file_the_user_renamed_away_cannot_be_made_anew_by_a_running_job(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub
) -> None:
    """`start_files.vanished` does not count a rename away as a deletion (vim keeps its backup so), so
    a container that started while `~/.bashrc` existed goes on counting it as existing there. The
    user moved it aside (`mv ~/.bashrc ~/.bashrc.old`, as oh-my-zsh's installer does with `.zshrc`);
    a job a command had left running then made a `~/.bashrc` of its own: it was judged the user's
    file, kept and bound read-only (never moved aside, no notice), and the user's next shell runs it."""
    bashrc = user_home / ".bashrc"
    job = f"until [ ! -e {hidden(bashrc)} ]; do sleep 0.05; done; echo 'echo pwned' > {hidden(bashrc)}"
    async with serving(home, bound=True) as client:
        await run(client, {"command": f"({job}) >/dev/null 2>&1 & echo started"})
        await anyio.sleep(0.5)
        bashrc.rename(user_home / ".bashrc.old")  # the person's own move, outside any container
        await came(bashrc.exists, seconds=5)
        await anyio.sleep(1.0)  # the watching thread has judged it
        later = await run(client, {"command": f"cat {hidden(bashrc)}"})
    moved = list(user_home.glob(".bashrc.cowork-terminal-moved-*"))
    assert not bashrc.exists() or bashrc.read_text() != "echo pwned\n", (
        f"a job's ~/.bashrc was kept as the user's (moved aside: {moved}; a later command reads {later['stdout']!r})"
    )


async def test_a_link_the_user_stows_into_a_protected_folder_while_the_tray_runs_is_followed(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub
) -> None:
    """What links in protected folders point to is protected (`container.link_targets`), read once
    per process as the set is prepared. The tray runs from login to logout: a link the user adds
    meanwhile (`stow autostart` puts `~/.config/autostart/sync.desktop -> ../../dotfiles/...`) is
    not followed until the tray starts again, and a command rewrote the entry through its target,
    unasked, after the link was there. Now a change of the folder's own entries makes the set be
    prepared anew at the next command."""
    dotfiles = user_home / "dotfiles" / "autostart"
    dotfiles.mkdir(parents=True)
    target = dotfiles / "sync.desktop"
    target.write_text("[Desktop Entry]\nExec=true\n")
    autostart = user_home / ".config" / "autostart"
    autostart.mkdir(parents=True)
    async with serving(home, bound=True) as client:
        await run(client, {"command": "true"})  # the set is prepared
        (autostart / "sync.desktop").symlink_to(target)  # the user's `stow`, outside
        await anyio.sleep(0.5)
        written = await run(
            client, {"command": f"printf '[Desktop Entry]\\nExec=sh -c id\\n' > {hidden(target)}; echo $?"}
        )
    assert (autostart / "sync.desktop").read_text() == "[Desktop Entry]\nExec=true\n", (
        f"a command rewrote the autostart entry the user linked in: {written['stdout']!r}"
    )
