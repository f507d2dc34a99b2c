"""Attacks on the OS container every command runs in (issue 21), through `execute_command` of a
server. What a command can or cannot do inside its container runs on the headless server in this
process (tests/in_process_server.py `serving`): its commands run in the same real container, with
the protected set of the `HOME` set here for it. Where the user allows a held command, the tray's
hub runs in this process (`hub`) and so does the server bound to it, as the tray's runners are; the
Allow is what a click on it in the prompt does (tests/in_process_server.py `allow`). Real processes
stay for a look at a peer: a detached process from a command asking a real tray, a look-alike tray
refused by a real `serve`, a starter killed while its containers start, the tray's notice in its log.

Each attack is a script written to /tmp and run with Python (the classifier cannot read it), so the
container is what stops it; each test checks that the attack ran before it checks that it failed.
The server runs with a home folder of the test's own, so a write that got through lands there.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import errno
import json
import os
import select
import shlex
import shutil
import site
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import pytest
from mcp_types import Implementation

from app.core import liveness, settings
from app.core.authority.holds import HeldCommand
from app.core.authority.hub import Hub
from app.core.channel.client import ask_tray
from app.core.channel.transport import address_for
from app.core.execution import container, landlock, read_only
from app.core.journal.store import Journal
from app.core.messages import BUS_HIDDEN_NOTE, CANCEL_REASON
from app.core.paths import AppPaths
from app.core.policy.approval import ApprovalMode, set_approval_mode
from tests.agent_scripts import agent_script
from tests.in_process_server import allow_when_held, came, ids_given_again, serving
from tests.raw_stdio import RawServer
from tests.stdio_client import connect, live_processes, run, running_with
from tests.test_container_pure import OTHER_SHELLS_FILES
from tests.tray_process import running_tray

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"),
]
PY = sys.executable
PACKAGE = Path(container.__file__).resolve().parents[2]
WAIT_S = 30.0
SCRATCH = f"/tmp/agent-{os.getpid()}-scratch"  # a route's own file, deleted by the route
SCOPED = landlock.plan(sys.platform, landlock.kernel_abi(), landlock.find_perl()) == landlock.SCOPED


def never_ask(paths: AppPaths) -> None:
    """The user's own earlier choice, made before any server or tray starts: no command waits for
    them. The classifier holds a script it cannot read; here the container alone must stop it."""
    with Journal.open(paths) as journal:
        set_approval_mode(journal, ApprovalMode.NEVER)


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """The home folder the server and its commands see, with the files a user has."""
    folder = tmp_path / "user"
    (folder / ".config").mkdir(parents=True)
    (folder / ".bashrc").write_text("alias ll='ls -l'\n")
    (folder / ".claude.json").write_text('{"mcpServers": {}}\n')
    (folder / ".xprofile").write_text("xset s off\n")
    (folder / ".Xdefaults").write_text("*background: grey\n")
    return folder


def as_user(user_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server in this process, and its commands, see `user_home` as a process started with that
    HOME would: `~` and the user site (~/.local/lib), which Python works out once per process."""
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setattr(site, "USER_BASE", None)  # worked out again from HOME when next asked


def own_namespace() -> str:
    return os.readlink("/proc/self/ns/pid")


def routes_into_folder(target: Path, existing: Path) -> dict[str, str]:
    """Ways to make `target` inside a protected folder, plain and disguised, and to edit `existing`."""
    encoded = base64.b64encode(str(target).encode()).decode()
    quoted = shlex.quote(str(target))
    return {
        "redirect": f"echo x > {quoted}",
        "script": f'printf \'rm -- "$0"; echo x > "$1"\' > {SCRATCH}.sh && bash {SCRATCH}.sh {quoted}',
        "base64 path": f'echo x > "$(echo {encoded} | base64 -d)"',
        "python -c": f"{PY} -c {shlex.quote(f'open({str(target)!r}, chr(119)).write(chr(120))')}",
        "cp": f"cp /etc/hostname {quoted}",
        "ln -s": f"ln -s /etc/hostname {quoted}",
        "sed -i": f"sed -i s/a/b/ {shlex.quote(str(existing))}",
        # root's capabilities are dropped (red team, 2026-12-04: as root, a command unmounted the bind)
        "umount": f"umount {shlex.quote(str(target.parent))} && echo x > {quoted}",
        "remount": f"mount -o remount,rw,bind {shlex.quote(str(target.parent))} && echo x > {quoted}",
    }


def routes_onto_file(target: Path) -> dict[str, str]:
    quoted = shlex.quote(str(target))
    return {
        "append": f"echo x >> {quoted}",
        "sed -i": f"sed -i s/l/L/ {quoted}",
        "cp over": f"cp /etc/hostname {quoted}",
        "ln -sf": f"ln -sf /etc/hostname {quoted}",
        "mv over": f"echo x > {SCRATCH} && mv {SCRATCH} {quoted}; s=$?; rm -f {SCRATCH}; exit $s",
        "rm": f"rm -f {quoted}",
        "umount": f"umount {quoted} && echo x >> {quoted}",
        "python -c": f"{PY} -c {shlex.quote(f'open({str(target)!r}, chr(97)).write(chr(120))')}",
    }


ATTACK = """
import json, os, subprocess
routes = json.load(open(__file__ + ".json"))
for made in (__file__, __file__ + ".json"):  # none is left in /tmp
    os.unlink(made)
out = {}
for name, line in routes.items():
    done = subprocess.run(["bash", "-c", line], capture_output=True, text=True)
    out[name] = [done.returncode, done.stderr.strip()[-200:]]
with open(__file__ + ".out", "w") as report:  # a file: on stdout it would meet the output budget
    json.dump(out, report)
"""


def write_tries(target: Path, log: Path, count: int, *, append: bool = False, go: Path | None = None) -> str:
    """A loop that tries to write `target` (its name hidden from the classifier) `count` times, 0.1 s
    apart, and logs W (written) or R (refused) each time in `log`; once `go` exists, when given."""
    named = f'"$(echo {base64.b64encode(str(target).encode()).decode()} | base64 -d)"'
    wait = f"until [ -e {go} ]; do sleep 0.05; done; " if go is not None else ""
    return (
        f"{wait}for i in $(seq 1 {count}); do if (echo x {'>>' if append else '>'} {named}) 2>/dev/null; "
        f"then echo W; else echo R; fi >> {log}; sleep 0.1; done"
    )


def attack_command(routes: dict[str, str]) -> tuple[str, Path]:
    """Writes the routes beside the script, then runs them all in one call; where it reports."""
    encoded = base64.b64encode(json.dumps(routes).encode()).decode()
    name = f"/tmp/agent-{os.getpid()}-routes.py"
    script = base64.b64encode(ATTACK.encode()).decode()
    command = f"printf %s {script} | base64 -d > {name} && printf %s {encoded} | base64 -d > {name}.json && {PY} {name}"
    return command, Path(f"{name}.out")


async def test_writes_into_every_member_of_the_protected_set_fail_by_plain_and_disguised_routes(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_user(user_home, monkeypatch)
    folders = {
        "data": paths.data_dir,
        "outputs": paths.outputs,
        "claude code": user_home / ".claude",
        "claude desktop": user_home / ".config" / "Claude",
        "autostart": user_home / ".config" / "autostart",
        "systemd user": user_home / ".config" / "systemd" / "user",
        "systemd": user_home / ".config" / "systemd",
        "environment.d": user_home / ".config" / "environment.d",
        "user tmpfiles": user_home / ".config" / "user-tmpfiles.d",  # its lines run as the user manager starts
        "user tmpfiles data": user_home / ".local" / "share" / "user-tmpfiles.d",
        "dbus services": user_home / ".local" / "share" / "dbus-1",
        "gtk settings": user_home / ".config" / "gtk-3.0",  # gtk-modules: loaded by the tray's menu
        "dconf": user_home / ".config" / "dconf",
        "plasma": user_home / ".config" / "plasma-workspace",
        "glib schemas": user_home / ".local" / "share" / "glib-2.0",
        "fontconfig": user_home / ".config" / "fontconfig",
        "user fonts": user_home / ".local" / "share" / "fonts",
        "older user fonts": user_home / ".fonts",
        "fontconfig cache": user_home / ".cache" / "fontconfig",  # a forged one names another font file
        "older fontconfig cache": user_home / ".fontconfig",
        "bashrc.d": user_home / ".bashrc.d",
        "user site": user_home / ".local" / "lib",
        "program": PACKAGE / "app",
        "venv": Path(sys.prefix),
    }
    stamp = f"attack-{os.getpid()}"
    routes: dict[str, str] = {}
    for label, folder in folders.items():
        folder.mkdir(parents=True, exist_ok=True)
        existing = folder / f"{stamp}-existing.txt"
        existing.write_text("a\n")
        for route, line in routes_into_folder(folder / stamp, existing).items():
            routes[f"{label}: {route}"] = line
    for name in (".bashrc", ".claude.json", ".xprofile", ".Xdefaults"):
        for route, line in routes_onto_file(user_home / name).items():
            routes[f"{name}: {route}"] = line
    for ancestor in (user_home / ".config", user_home / ".local", user_home / ".claude", paths.data_dir):
        routes[f"mv {ancestor.name}"] = f"mv {shlex.quote(str(ancestor))} {shlex.quote(str(ancestor))}-moved"
    # the kernel's settings: as root, core_pattern ran a command's program outside (written back unchanged here)
    routes["kernel settings"] = "cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern"
    before = {name: (user_home / name).read_text() for name in (".bashrc", ".claude.json", ".xprofile", ".Xdefaults")}
    never_ask(paths)
    try:
        command, report = attack_command(routes)
        async with serving(home) as client:
            result = await run(client, {"command": command, "timeout": 120_000})
        assert result.get("exitCode") == 0, result
        outcomes = json.loads(report.read_text())  # the attack ran: every route reported back
        report.unlink()
        assert set(outcomes) == set(routes)
        got_through = {name: outcome for name, outcome in outcomes.items() if outcome[0] == 0}
        assert got_through == {}, got_through
        assert any("Read-only file system" in outcome[1] for outcome in outcomes.values())
        for label, folder in folders.items():
            assert not (folder / stamp).exists() and not (folder / stamp).is_symlink(), label
            assert (folder / f"{stamp}-existing.txt").read_text() == "a\n", label
        assert {name: (user_home / name).read_text() for name in before} == before
        for ancestor in (user_home / ".config", user_home / ".local", user_home / ".claude", paths.data_dir):
            assert ancestor.is_dir() and not Path(f"{ancestor}-moved").exists()
    finally:
        for folder in folders.values():
            for leftover in folder.glob(f"{stamp}*"):
                leftover.unlink()


async def test_a_write_refused_by_the_container_tells_the_model_why_and_what_to_do(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_user(user_home, monkeypatch)
    target = user_home / ".claude" / "settings.json"
    hidden = base64.b64encode(str(target).encode()).decode()
    async with serving(home) as client:  # the default mode: judged moderate, so it ran, and the OS said no
        result = await run(client, {"command": f'cp /dev/null "$(echo {hidden} | base64 -d)"'})
    assert "Read-only file system" in result["stderr"], result
    assert result["note"].startswith(f"{target.parent} is protected by Cowork Terminal"), result
    assert "ask the user" in result["note"] and "the user is asked to allow it" in result["note"]
    never_ask(paths)
    write = f"open(__import__('base64').b64decode({hidden!r}).decode(), 'w')"
    async with serving(home) as client:
        result = await run(client, {"command": agent_script(write)})
    assert "Read-only file system" in result["stderr"], result  # it ran, and the OS said no
    assert result["note"].startswith(f"{target.parent} is protected by Cowork Terminal"), result
    # Never ask: no Allow can come, so the model is not sent to ask for one (a review, 2026-12-04).
    assert "the user is asked" not in result["note"] and "the user chose Never ask" in result["note"], result
    assert "make this change themselves" in result["note"]
    assert not target.exists()


async def test_a_command_runs_in_a_pid_namespace_of_its_own_and_its_background_job_outlives_it(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_user(user_home, monkeypatch)
    marker = f"17{os.getpid() % 1000}.25"
    async with serving(home) as client:
        first = await run(client, {"command": f"readlink /proc/self/ns/pid; (setsid sleep {marker} &)"})
        assert first["exitCode"] == 0 and first["stdout"].strip() != own_namespace()
        assert first["stdout"].startswith("pid:[")
        started = time.monotonic()
        second = await run(client, {"command": "ps -e -o pid= | wc -l"})
        assert int(second["stdout"]) <= 4, "a new namespace sees only its own processes"
        assert time.monotonic() - started < 5
        still = await run(client, {"command": "pgrep -x sleep || echo gone"})
        assert still["stdout"].strip() == "gone", "another command's container cannot see it"
        assert running_with(f"sleep {marker}"), "the job outlives its command"
    with Journal.open(paths) as journal:
        reasons = [row.reason for row in journal.recent_commands()]
    assert not any(reason and "without the container" in reason for reason in reasons)


async def test_without_bwrap_commands_still_run_and_each_journal_row_says_it_was_unprotected(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch, no_container: None
) -> None:
    as_user(user_home, monkeypatch)
    async with serving(home) as client:
        result = await run(client, {"command": "readlink /proc/self/ns/pid; echo ok"})
    assert result["stdout"].split() == [own_namespace(), "ok"], "it ran, in the host's namespace"
    with Journal.open(paths) as journal:
        row = journal.recent_commands()[0]
    assert row.reason == "ran without the container: bwrap is not installed (apt install bubblewrap)"


async def test_without_bwrap_each_session_command_is_logged_as_unprotected_too(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch, no_container: None
) -> None:
    """A red team, 2026-12-05: terminal_run's rows said nothing of the weaker mode."""
    as_user(user_home, monkeypatch)
    async with serving(home) as client:
        ran = await client.call_tool("terminal_run", {"command": "echo ok"})
        failed = await client.call_tool("terminal_run", {"command": "false"})
    assert not ran.is_error and not failed.is_error, (ran, failed)
    with Journal.open(paths) as journal:
        reasons = {row.command: row.reason for row in journal.recent_commands()}
    unprotected = "ran without the container: bwrap is not installed (apt install bubblewrap)"
    assert reasons == {"echo ok": unprotected, "false": unprotected}


async def test_without_bwrap_a_command_that_names_a_protected_file_waits_for_a_person_and_one_that_reads_it_runs(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch, no_container: None
) -> None:
    """Where no container keeps the protected set read-only (Linux without bwrap; Windows, where a job
    protects no file), the approval rules guard it: a command that may write and names a member waits
    for a person (red team, 2026-12-04: `echo calc >> ~/.bashrc` and a Claude config ran unasked on
    Windows). Reading one, or sourcing a start-up file, runs as before."""
    as_user(user_home, monkeypatch)
    (user_home / "project" / "evil").mkdir(parents=True)
    (user_home / "project" / "evil" / ".bashrc").write_text("calc\n")
    async with serving(home) as client:
        appended = await run(client, {"command": "echo calc >> ~/.bashrc"})
        claude = await run(client, {"command": f"cp /dev/null {user_home}/.claude.json"})
        # Routes the text alone does not show (left open by the thirteenth sitting): a glob, a
        # variable, a relative path after `cd`, each read word by word as bash would.
        disguised = [
            await run(client, {"command": command, "cwd": str(user_home / "project")})
            for command in (
                "echo calc >> ~/.b?shrc",
                "f=rc; echo calc >> ~/.bash$f",
                "cd && echo calc >> .bashrc",
                "cp /dev/null ~/.cl*.json",
                # a red team's, run for real (each wrote the file): into a folder above it, an option's
                # value, find's matches, a brace expression
                "cp evil/.bashrc ~",
                "git log -1 --format=%B --output=$HOME/.bashrc",
                "find ~ -maxdepth 1 -name .bashrc -exec cp evil/.bashrc {} \\;",
                "echo calc | tee -a ~/.{bashrc,xprofile}",
                f"echo {'x' * 1100} >> ~/.b?shrc",  # a long command: read on a worker thread
                'echo "a;. " > ~/.bashrc "b"',  # a second red team: a text rewrite hid the path
            )
        ]
        # In the home folder: a `cd` that may leave it there, or leads back to it, is not followed
        at_home = [
            await run(client, {"command": command, "cwd": str(user_home)})
            for command in (
                "(cd project); echo calc >> .bashrc",
                "cd . && python3 -c \"open('.bashrc', 'a').write('calc')\"",
            )
        ]
        # In the home folder, a command that moves into a project names the project's own .claude
        project_claude = await run(client, {"command": "cd project && mkdir -p .claude && echo x > .claude/notes.md"})
        # A glob or a variable that only reads a member
        glob_read = await run(client, {"command": "ls -a ~/.[bx]* > listing.txt", "cwd": str(user_home / "project")})
        read = await run(client, {"command": "grep -c alias ~/.bashrc"})
        sourced = await run(client, {"command": "source ~/.bashrc && alias ll"})
    for refused in (appended, claude, *disguised, *at_home):
        assert "nobody can approve it and it was not run" in refused.get("error", ""), refused
        assert "Changes a file Cowork Terminal guards" in refused["error"]
    assert (user_home / ".bashrc").read_text() == "alias ll='ls -l'\n"
    assert (user_home / ".claude.json").read_text() == '{"mcpServers": {}}\n'
    assert (user_home / ".xprofile").read_text() == "xset s off\n"
    assert project_claude.get("exitCode") == 0, project_claude
    assert glob_read.get("exitCode") == 0, glob_read
    assert ".bashrc" in (user_home / "project" / "listing.txt").read_text()
    assert read["stdout"].strip() == "1", read
    assert sourced["stdout"].strip() == "alias ll='ls -l'", sourced


async def test_without_bwrap_and_never_asked_a_command_that_names_a_protected_file_is_not_run(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch, no_container: None
) -> None:
    """With a container, Never ask still leaves the protected set read-only (the write fails); without
    one, such a command is refused, and the model is told no Allow can come (a red team, 2026-12-04:
    it ran). Other commands run unasked, as the user chose."""
    as_user(user_home, monkeypatch)
    never_ask(paths)
    async with serving(home) as client:
        appended = await run(client, {"command": "echo calc >> ~/.bashrc"})
        other = await run(client, {"command": "echo ok > notes.txt && cat notes.txt", "cwd": str(user_home)})
    assert "Cowork Terminal guards" in appended.get("error", ""), appended
    assert "the user chose Never ask" in appended["error"]
    assert (user_home / ".bashrc").read_text() == "alias ll='ls -l'\n"
    assert other.get("stdout", "").strip() == "ok", other


async def test_with_the_protection_switched_off_in_the_app_naming_a_protected_file_is_not_asked(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch, no_container: None
) -> None:
    """The user's click (Protect my settings from commands, off) lets commands change those files."""
    as_user(user_home, monkeypatch)
    with Journal.open(paths) as journal:
        journal.set_setting(settings.CONTAINER, False)
    async with serving(home) as client:
        appended = await run(client, {"command": "echo calc >> ~/.bashrc"})
    assert appended.get("exitCode") == 0, appended
    assert (user_home / ".bashrc").read_text().endswith("calc\n")


def test_without_bwrap_the_tray_says_once_that_commands_are_less_protected_and_how_to_fix_it(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(container.BWRAP_ENV, str(tmp_path / "no-bwrap"))
    log = tmp_path / "tray.log"
    with running_tray(home, log=log):
        deadline = time.monotonic() + WAIT_S
        while "notice: Commands are less protected" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
    said = log.read_text()
    assert said.count("notice: Commands are less protected") == 1
    assert "sudo apt install bubblewrap" in said


async def test_a_bus_where_its_address_puts_it_and_the_accessibility_bus_cannot_be_reached_from_a_command(
    home: Path, paths: AppPaths, user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bus starts the services it knows with the environment a client gave it: a command that set
    LD_PRELOAD there ran code outside (a red-team route, through a `dbus-launch` session bus in /tmp
    and through at-spi's bus in the runtime folder). Stand-ins listen where each bus, and each sound
    server, would."""
    runtime = tmp_path / "runtime"
    (runtime / "at-spi").mkdir(parents=True, mode=0o700)
    (runtime / "pulse").mkdir()
    session_bus = Path(tempfile.mkdtemp(prefix="dbus-", dir="/tmp")) / "bus"  # where dbus-launch puts it
    # The sound servers too: they load modules that make a pipe at any path a client names; and the
    # system bus, where its address puts it (logind powers off for an active session's user).
    elsewhere = [runtime / "at-spi" / "bus_0", runtime / "pipewire-0", runtime / "pulse" / "native", tmp_path / "sys"]
    listeners = []
    for path in (session_bus, *elsewhere):
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(path))
        listener.listen()
        listeners.append(listener)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={session_bus},guid=00")
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={tmp_path / 'sys'}")
    as_user(user_home, monkeypatch)
    never_ask(paths)
    probe = (
        "import socket, sys\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        socket.socket(socket.AF_UNIX).connect(path)\n"
        "        print('reached', path)\n"
        "    except OSError as exc:\n"
        "        print('refused', exc.errno)\n"
    )
    try:
        for listener in listeners:  # from outside, both answer
            socket.socket(socket.AF_UNIX).connect(listener.getsockname())
        async with serving(home) as client:
            result = await run(
                client, {"command": agent_script(probe, args=tuple(map(str, (session_bus, *elsewhere))))}
            )
    finally:
        for listener in listeners:
            listener.close()
        shutil.rmtree(session_bus.parent, ignore_errors=True)
    assert "stdout" in result and "reached" not in result["stdout"], result
    assert result["stdout"].count("refused") == 5, "all refused: the sockets are /dev/null, their folders empty"


async def test_a_hidden_socket_gone_since_the_container_was_prepared_leaves_no_file_where_it_was(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each hidden socket is bound over with /dev/null; bwrap makes the mount point of a bind where
    nothing is: a bus in /tmp that ended while the tray ran was left an empty 0444 file on the host by
    every later container (red team, 2026-12-05). What is hidden is read as each container is made."""
    as_user(user_home, monkeypatch)
    # A /tmp of this test's own: the other tests' containers, in other processes, hide the buses of
    # the real one, and would make the file this test looks for.
    tmp = user_home / "tmp"
    tmp.mkdir()
    listing = container.tmp_buses
    monkeypatch.setattr(container, "tmp_buses", lambda folder=str(tmp): listing(folder))
    bus = tempfile.mktemp(prefix="dbus-", dir=tmp)  # where dbus-launch puts its socket
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(bus)
        listener.listen()
        async with serving(home) as client:
            first = await run(client, {"command": f"test -S {bus}; echo $?"})
            # The spare started after it makes its mounts meanwhile: one still starting as the bus ends
            # can leave the file (a race left, said in the note of 2026-12-05's twenty-third sitting).
            await anyio.sleep(1.5)
            listener.close()
            os.unlink(bus)  # the bus ended
            later = await run(client, {"command": "echo ran"})
            await run(client, {"command": "true"})  # a spare started meanwhile is used, or ended
            await anyio.sleep(0.5)
        left = os.path.lexists(bus)
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            os.unlink(bus)
    assert first["stdout"].strip() == "1", first  # hidden: /dev/null there, not a socket
    assert "ran" in later["stdout"], later
    assert not left, f"a container made a file where the hidden socket {bus} was"


async def test_a_protected_folder_made_anew_is_bound_in_a_running_command_which_goes_on(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's `mv ~/.claude ~/.claude-old; mkdir ~/.claude` takes the read-only bind along with the
    old folder; a command still running (in the background here) finds the new one bound read-only
    too, and goes on (a job whose command ended is ended instead: tests/test_red_team_eight_container.py)."""
    claude = user_home / ".claude"
    claude.mkdir()
    stamp = f"{os.getpid()}-{time.monotonic_ns()}"
    log = Path(f"/tmp/tries-{stamp}")
    tries = write_tries(claude / "x", log, 40)
    as_user(user_home, monkeypatch)
    never_ask(paths)
    try:
        async with serving(home) as client:
            started = await run(client, {"command": tries, "background": True})
            assert started["status"] == "running", started
            await anyio.sleep(0.5)
            claude.rename(user_home / ".claude-old")  # the person's own, outside any container
            claude.mkdir()
            deadline = time.monotonic() + WAIT_S
            while time.monotonic() < deadline and len(log.read_text().split() if log.exists() else []) < 40:
                await anyio.sleep(0.1)
        said = log.read_text().split()
    finally:
        log.unlink(missing_ok=True)
    assert len(said) == 40, "the command went on to its end"
    assert set(said[:4]) == {"R"} and set(said[-20:]) == {"R"}, said
    assert not (user_home / ".claude-old" / "x").exists()


def as_nobody(argv: list[str]) -> list[str]:
    return ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", *argv]


@pytest.mark.skipif(shutil.which("setpriv") is None or os.geteuid() != 0, reason="root, to start one as another user")
@pytest.mark.skipif(not container.task_limit(65534), reason="a kernel that counts a user namespace's tasks alone")
@pytest.mark.parametrize("scoped", [False, True])
def test_a_users_command_can_make_only_so_many_tasks_and_bash_says_why_a_fork_failed(
    scoped: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fork bomb, or a loop of background jobs, stops at MAX_TASKS in its container (a red team,
    2026-12-05, made 1504, and nothing stopped more), with the bash init and with the Perl one; the
    kernel exempts root, so a user's container is started here (a small limit, to spare the machine)."""
    perl = landlock.find_perl()
    if scoped and perl is None:
        pytest.skip("no Perl for the scoping init")
    monkeypatch.setattr(container, "MAX_TASKS", 20)
    init = container.limited_init(landlock.init_argv(perl), 65534) if scoped and perl else ()
    monkeypatch.setattr(container.os, "geteuid", lambda: 65534)  # the argv of a user's tray
    loop = "ulimit -Su; ulimit -Hu; for i in $(seq 30); do sleep 0.5 & done; ps -e --no-headers | wc -l"
    status_read, status_write = os.pipe()
    try:
        argv = container.bwrap_argv(
            container.bwrap_program(os.environ), [], [], ["bash", "-c", loop], status_write, init
        )
        monkeypatch.undo()
        done = subprocess.run(
            as_nobody(argv), pass_fds=(status_write, container.lifeline()), capture_output=True, text=True,
            cwd="/", timeout=WAIT_S, check=False,
        )  # fmt: skip
    finally:
        os.close(status_write)
        os.close(status_read)
    soft, hard, *tasks = done.stdout.split()  # `ps` too may find no task to run in
    assert (soft, hard) == ("20", "20") and all(int(count) <= 20 for count in tasks), done
    assert "fork: retry: Resource temporarily unavailable" in done.stderr
    note = container.tasks_hint(done.stderr, euid=65534)
    assert note is not None and "8192 processes and threads" in note, "the model reads why, and what to do"


@pytest.mark.skipif(shutil.which("timedatectl") is None, reason="systemd's timedatectl")
async def test_a_command_that_needs_the_hidden_system_bus_tells_the_model_not_to_retry(
    home: Path, paths: AppPaths, user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """systemctl, nmcli or timedatectl fail inside without the bus: the model reads why, not only
    "Failed to connect to bus", which sent it looking for another way to reach the same service."""
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={tmp_path / 'no-bus'}")
    as_user(user_home, monkeypatch)
    never_ask(paths)
    async with serving(home) as client:
        result = await run(client, {"command": "timedatectl status"})
    assert result["exitCode"] != 0 and "Failed to connect to bus" in result["stderr"], result
    assert any(BUS_HIDDEN_NOTE in str(value) for value in result.values()), result


def test_a_program_file_with_a_second_name_is_found_and_one_name_each_is_not(tmp_path: Path) -> None:
    """uv fills a venv with hard links into its cache, conda an environment into its `pkgs`: a command
    could change the program through the other name, which the read-only bind does not cover."""
    venv, cache = tmp_path / "venv", tmp_path / "cache"
    (venv / "lib" / "pkg").mkdir(parents=True)
    cache.mkdir()
    for name in ("a.py", "b.py"):
        (venv / "lib" / "pkg" / name).write_text("x = 1\n")
    os.symlink(venv / "lib" / "pkg" / "a.py", venv / "lib" / "alias.py")  # a symlink is one file, one name
    assert container.linked_program_file([str(venv)]) is None
    os.link(venv / "lib" / "pkg" / "b.py", cache / "b.py")
    assert container.linked_program_file([str(tmp_path / "gone"), str(venv)]) == str(venv / "lib" / "pkg" / "b.py")
    assert container.linked_program_file([str(venv)], limit=1) is None, "only the first files are looked at"


def test_a_tray_whose_program_files_are_hard_links_says_once_that_commands_can_change_them(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tray runs from a copy of the package whose first file has a second name in a "cache"."""
    root = tmp_path / "program"
    shutil.copytree(Path(container.__file__).parents[2], root / "app", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "cache").mkdir()
    os.link(root / "app" / "__init__.py", tmp_path / "cache" / "__init__.py")
    monkeypatch.chdir(root)  # `python -m app` takes the package from the working folder first
    log = tmp_path / "tray.log"
    with running_tray(home, log=log):
        deadline = time.monotonic() + WAIT_S
        while "notice: Cowork Terminal's files are not protected" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
    said = log.read_text()
    assert said.count("notice: Cowork Terminal's files are not protected") == 1
    assert "see the README (Hard links)" in said and str(root / "app" / "__init__.py") in said


DETACHED = """
import os, subprocess, sys
env = {k: v for k, v in os.environ.items() if k != "COWORK_TERMINAL_RUN"}
subprocess.Popen([sys.executable, "-c", DRIVER, REPORT], env=env, start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("detached")
"""
# Runs detached (setsid, no run mark) and talks straight to the tray's address, as an attacker would.
DRIVER = """
import json, os, socket, subprocess, sys
from app.core.channel.transport import address_for, connect
from app.core.paths import AppPaths
out = {}
asks = {"resume": {}, "approve": {"id": 1}, "quit": {}, "open_log": {}, "clear_history": {},
        "settings": {"changes": {"approval_mode": "never"}}, "state": {}, "pause": {}}
for op, fields in asks.items():
    address = address_for(AppPaths.from_environment())
    try:
        socket.socket(socket.AF_UNIX).connect(address.sockaddr())
    except OSError as exc:  # Landlock's scope: the tray's abstract socket is out of reach
        out[op] = {"op": "unreachable", "errno": exc.errno}
        continue
    channel, _peer = connect(address)
    channel.send({"op": "hello", "role": "cli", "pid": os.getpid()})  # a valid hello: pid 0 is cut off there
    channel.receive(5)
    channel.send({"op": op, "seq": 1, **fields})
    reply = channel.receive(5)
    while reply is not None and reply.get("seq") != 1:  # a push (the new state) may come first
        reply = channel.receive(5)
    out[op] = reply
    channel.close()
done = subprocess.run([sys.executable, "-m", "app", "stop", "1"], capture_output=True, text=True, timeout=60)
out["cli stop"] = [done.returncode, done.stdout + done.stderr]
json.dump(out, open(sys.argv[1] + ".tmp", "w"))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
"""


async def detached_asks(home: Path, paths: AppPaths, tmp_path: Path) -> tuple[dict, dict]:
    """A detached process from a command asks the tray everything: its answers, and the tray's state."""
    report = tmp_path / "detached.json"
    script = DETACHED.replace("DRIVER", repr(DRIVER)).replace("REPORT", repr(str(report)))
    never_ask(paths)
    with running_tray(home) as tray:
        async with connect(home, headless=False) as client:
            started = await run(client, {"command": agent_script(script)})
            assert started.get("stdout") == "detached\n", started
            deadline = time.monotonic() + WAIT_S * 2
            while not report.exists() and time.monotonic() < deadline:
                await anyio.sleep(0.1)
        answers = json.loads(report.read_text())  # the detached process ran and asked
        assert tray.poll() is None, "the tray did not quit"
        state = json.loads((await anyio.to_thread.run_sync(ask_tray, paths, "state"))["message"])
        assert os.readlink(f"/proc/{tray.pid}/ns/pid") == own_namespace()
    return answers, state


@pytest.mark.skipif(SCOPED, reason="with Landlock's scopes a command cannot reach the tray at all (below)")
async def test_a_detached_process_from_a_command_may_pause_but_not_resume_approve_quit_or_open_the_log(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    answers, state = await detached_asks(home, paths, tmp_path)
    assert state["paused"] is True, "pause, a tightening, was taken from inside the container"
    for op in ("resume", "approve", "quit", "open_log", "clear_history", "settings", "state"):
        assert answers[op]["op"] == "error" and "inside a command's container" in answers[op]["message"], op
    assert answers["pause"]["op"] == "ack", answers["pause"]
    code, said = answers["cli stop"]
    assert "inside a command's container" not in said, "stop reaches the tray from inside too"


@pytest.mark.skipif(not SCOPED, reason="needs Landlock's scopes (Linux 6.12) and perl")
async def test_with_landlock_scopes_a_detached_process_from_a_command_cannot_even_reach_the_tray(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    answers, state = await detached_asks(home, paths, tmp_path)
    for op in ("resume", "approve", "quit", "open_log", "clear_history", "settings", "state", "pause"):
        assert answers[op] == {"op": "unreachable", "errno": errno.EPERM}, (op, answers[op])
    assert state["paused"] is False
    code, said = answers["cli stop"]
    assert code == 1 and "Read-only file system" in said, "nor can it stop a command through the journal"


LOOK_ALIKE = """
import os, subprocess, sys
data, uid, gid = sys.argv[1], str(os.getuid()), str(os.getgid())
inner = f"mount -t tmpfs none {data} && exec unshare --user --map-user={uid} --map-group={gid} " \\
        f"env PYSTRAY_BACKEND=dummy {sys.executable} -m app tray"
env = {k: v for k, v in os.environ.items() if k != "COWORK_TERMINAL_RUN"}
subprocess.Popen(["unshare", "-Urm", "sh", "-c", inner], env=env, start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("started")
"""


def test_a_look_alike_tray_started_from_a_command_is_refused_by_the_server(home: Path, paths: AppPaths) -> None:
    """The command gives a genuine tray a writable data folder of the same name in its own mount
    namespace, so it listens at the real address: only its pid namespace tells it apart."""
    address = address_for(paths).name
    never_ask(paths)
    server = RawServer(home, "--headless")
    try:
        assert server.initialize() is not None
        script = LOOK_ALIKE.replace("sys.argv[1]", repr(str(paths.data_dir)))
        said = server.call("execute_command", json.dumps({"command": agent_script(script)}))
        assert said is not None and '"stdout":"started\\n"' in said, said
        deadline = time.monotonic() + WAIT_S
        while address not in Path("/proc/net/unix").read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert address in Path("/proc/net/unix").read_text(), "the look-alike listens at the tray's address"
        refusal = read_stderr_until(server, "runs inside a command's container", WAIT_S)
        assert "not taking orders from the tray's address" in refusal
    finally:
        server.close()


def read_stderr_until(server: RawServer, text: str, timeout_s: float) -> str:
    assert server.process.stderr is not None
    seen = b""
    deadline = time.monotonic() + timeout_s
    while text.encode() not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([server.process.stderr], [], [], 0.2)
        if ready:
            chunk = os.read(server.process.stderr.fileno(), 65536)
            if not chunk:
                break
            seen += chunk
    return seen.decode("utf-8", "replace")


async def test_a_container_switched_off_in_the_app_runs_commands_unprotected_and_says_so(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_user(user_home, monkeypatch)
    with Journal.open(paths) as journal:  # what the tray stores after the user's click in its menu
        journal.set_setting("container", False)
    async with serving(home) as client:
        result = await run(client, {"command": "readlink /proc/self/ns/pid"})
    assert result["stdout"].strip() == own_namespace()
    with Journal.open(paths) as journal:
        assert journal.recent_commands()[0].reason == "ran without the container: the user switched it off in the app"


@pytest.mark.parametrize("contained", [True, False], ids=["in its container", "container switched off"])
async def test_a_background_job_that_prints_after_its_command_returned_goes_on_and_the_model_is_told_it_is_not_kept(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch, contained: bool
) -> None:
    """`npm run dev &`: a job that logs after its command returned. Our ends of its pipes closed, it
    died at its next line (SIGPIPE); left unread, it hung once the pipe was full (about 200 kB)."""
    from app.core.execution.run_result import LEFT_RUNNING_NOTE

    as_user(user_home, monkeypatch)
    if not contained:
        with Journal.open(paths) as journal:
            journal.set_setting("container", False)
    done = user_home / "done"
    talker = f"(sleep 2; i=0; while [ $i -lt 40000 ]; do echo log line $i; i=$((i+1)); done; touch {done}) &"
    async with serving(home) as client:
        result = await run(client, {"command": f"{talker} echo started"})
        assert (result["stdout"], result["note"]) == ("started\n", LEFT_RUNNING_NOTE)
        with anyio.fail_after(WAIT_S):
            while not done.exists():
                await anyio.sleep(0.1)
        quiet = await run(client, {"command": f"(sleep 0.1; rm {done}) >/dev/null 2>&1 & echo quiet"})
    assert (quiet["stdout"], quiet["note"]) == ("quiet\n", None), "a job that keeps no pipe is not mentioned"


async def allow_once_held(hub: Hub, seen: list[dict]) -> None:
    """Allow the command once the hub holds it, as a click on Allow in the prompt does; `seen` gets
    the holds as the tray tells them (`cowork-terminal approvals`, the prompt)."""
    seen.append((await allow_when_held(hub, seconds=WAIT_S)).to_window())


async def test_a_change_to_a_protected_file_waits_for_the_user_and_once_allowed_runs_without_the_binds(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hub's runner runs the server's commands in this process (issue 21): it sees this user's home.
    monkeypatch.setenv("HOME", str(user_home))
    seen: list[dict] = []

    async with serving(home, bound=True) as client, anyio.create_task_group() as g:
        g.start_soon(allow_once_held, hub, seen)
        hidden = base64.b64encode(str(paths.data_dir / "sneaked").encode()).decode()
        command = f"echo '# allowed' >> ~/.bashrc; touch \"$(echo {hidden} | base64 -d)\""
        result = await run(client, {"command": command})
    assert "Read-only file system" in result["stderr"], "what it does not name stays read-only"
    assert not (paths.data_dir / "sneaked").exists()
    assert (user_home / ".bashrc").read_text().endswith("# allowed\n"), "it ran with ~/.bashrc writable"
    assert "Cowork Terminal protects" in seen[0]["reasons"], seen


async def test_a_command_leaving_a_quiet_background_job_returns_at_once_and_a_talking_one_is_still_heard(
    tmp_path: Path,
) -> None:
    from app.core.execution.executor import DRAIN_AFTER_EXIT_S, CommandSpec, run_command

    found = container.linux_container([str(tmp_path / "data")])
    assert found.on, found.detail

    async def timed(command: str) -> tuple[float, str]:
        spec = CommandSpec(command, str(tmp_path), dict(os.environ), 10, "/bin/bash", container=found)
        began = time.monotonic()
        result = await run_command(spec)
        assert result.contained and result.exit_code == 0
        return time.monotonic() - began, result.to_model()["stdout"]

    # Measured against the same command without the job: starting bwrap alone takes about a second
    # on a loaded machine, while holding the pipes would add the whole drain on top of it. The
    # command waits until the job has redirected its output: on a loaded machine bash could exit
    # first, while the job still held the pipes it inherited, and the executor rightly waited for it.
    alone_s, said = await timed("echo started")
    assert said == "started\n"
    job = f"sleep 2.{os.getpid() % 1000:03d}7"  # an unusual duration, to find this job among the machine's processes
    quiet = f'nohup {job} >/dev/null 2>&1 & until [ "$(readlink /proc/$!/fd/2)" = /dev/null ]; do sleep 0.01; done'
    quiet_s, said = await timed(f"{quiet}; echo started")
    assert said == "started\n" and quiet_s - alone_s < DRAIN_AFTER_EXIT_S, "bwrap holds the pipes, the job does not"
    _talking_s, said = await timed("(sleep 0.2; echo late) & echo now")
    assert said == "now\nlate\n"
    # The quiet job's container (bwrap, our child) ends with the job: this test's event loop sees it
    # end, or its process transport is left to the garbage collector after the loop closed (a warning
    # in whatever test runs next).
    with anyio.fail_after(WAIT_S):
        while live_processes(job):
            await anyio.sleep(0.1)
        await anyio.sleep(0.2)  # the loop hears of bwrap's exit from the child watcher's thread


@pytest.mark.parametrize("tool", ["execute_command", "execute_read_only_command"])
async def test_no_command_reads_the_journal_where_every_app_keeps_its_commands(
    home: Path, paths: AppPaths, hub: Hub, tool: str
) -> None:
    """Red team, 2026-12-05: the data folder was read-only in the container but readable, and one
    agent's `grep -ra` over the folder above it found another app's secret in the journal."""
    async with serving(home, bound=True, client_info=Implementation(name="claude-ai", version="1")) as cowork:
        said = await run(cowork, {"command": "export DB_URL=postgres://u:hunter2@db; echo TOKEN-XYZZY-123"})
    assert said["exitCode"] == 0, said
    assert b"XYZZY" in paths.journal.read_bytes() + Path(f"{paths.journal}-wal").read_bytes()
    looking = "grep -rao 'hunter2[^;]*\\|XYZZY[-0-9]*' .; ls -AR .; echo looked"  # from the folder above it
    async with serving(home, bound=True, client_info=Implementation(name="claude-code", version="1")) as code:
        result = await code.call_tool(tool, {"command": looking, "cwd": str(home.parent)})
    text = result.content[0].text
    assert "looked" in text and "hunter2" not in text and "XYZZY" not in text, text
    assert "journal" not in text, "the data folder is empty in the container"


async def test_a_container_stopped_as_it_starts_leaves_nothing_running(tmp_path: Path) -> None:
    """Red team, 2026-12-05: a pause that came as a command's container was being set up killed bwrap
    alone; its child, killed before it asked to die with its parent, ran the command on unwatched
    (or waited forever for the set-up), in about half of such stops."""
    import random

    from app.core.execution.executor import CommandSpec, run_command
    from app.core.execution.run_result import StopSignal

    found = container.linux_container([str(tmp_path / "data")])
    assert found.on, found.detail
    marker = f"31{os.getpid() % 1000}"
    for n in range(40):
        stop = StopSignal()
        spec = CommandSpec(
            f"sleep {marker}.{n:02d}7", str(tmp_path), dict(os.environ), 10, "/bin/bash", container=found
        )

        async def stop_soon(stop: StopSignal = stop) -> None:
            await anyio.sleep(random.random() * 0.006)
            stop.set("paused")

        async with anyio.create_task_group() as group:
            group.start_soon(stop_soon)
            await run_command(spec, stop)
    await anyio.sleep(0.5)  # what a parent's death ends is gone by then
    assert live_processes(f"sleep {marker}.") == []


async def test_an_allowed_command_that_needs_sudo_runs_outside_the_container_and_the_journal_says_so(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hub's runner runs the server's commands in this process: with the test's home folder.
    monkeypatch.setenv("HOME", str(user_home))
    seen: list[dict] = []
    async with serving(home, bound=True) as client, anyio.create_task_group() as g:
        g.start_soon(allow_once_held, hub, seen)
        # sudo itself may be missing here: where the command ran is what the test reads.
        result = await run(client, {"command": "sudo -n true; readlink /proc/self/ns/pid"})
    assert result["stdout"].strip() == own_namespace(), result
    assert "it runs without that protection" in seen[0]["reasons"], "the prompt says where it will run"
    with Journal.open(paths) as journal:
        reason = journal.recent_commands()[0].reason or ""
    assert "gains privileges" in reason, reason


PLANTED = '#!/bin/sh\necho PLANTED; echo planted >> "$HOME/.bashrc"\n'


@pytest.mark.parametrize(
    ("program", "command"),
    [("sudo", "sudo -n true; readlink /proc/self/ns/pid"), ("tee", "echo '# mine' | tee -a ~/.bashrc")],
)
async def test_a_program_a_command_put_first_on_path_is_not_what_an_allowed_command_runs_outside_the_container(
    home: Path, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch, program: str, command: str
) -> None:
    """Red team, 2026-12-05: a `sudo` (or `tee`) planted in ~/.local/bin, first on PATH as Ubuntu's
    ~/.profile puts it, ran as the user's Allow of `sudo apt-get update` outside the container."""
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("PATH", f"{user_home / '.local' / 'bin'}:{os.environ['PATH']}")
    (user_home / "proj").mkdir()
    (user_home / "proj" / "tool").write_text(PLANTED)  # as any command in the project may write
    seen: list[dict] = []
    async with serving(home, bound=True) as client:
        plant = f"mkdir -p ~/.local/bin && chmod +x tool && cp tool ~/.local/bin/{program}"
        planted = await run(client, {"command": plant, "cwd": str(user_home / "proj")})
        assert planted["exitCode"] == 0, planted
        async with anyio.create_task_group() as g:
            g.start_soon(allow_once_held, hub, seen)
            result = await run(client, {"command": command})
    assert seen, "it waited for the user"
    assert "PLANTED" not in result["stdout"], result
    assert "planted" not in (user_home / ".bashrc").read_text()
    if program == "tee":
        assert result["stdout"] == "# mine\n" and (user_home / ".bashrc").read_text().endswith("# mine\n")
    elif shutil.which("sudo", path="/usr/bin:/bin:/usr/sbin:/sbin") is None:  # no sudo on this machine
        assert f"`sudo` is not in those, only in {user_home / '.local' / 'bin'}" in (result["note"] or ""), result
        assert "full path" in result["note"]


async def test_an_allowed_command_that_only_names_a_privileged_program_still_runs_in_the_container(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team, 2026-12-04: `su` as a word (`: su`, `grep -rn snap`) in a command the user allowed
    for what it deletes ran the whole command outside the container."""
    monkeypatch.setenv("HOME", str(user_home))
    (user_home / "proj" / "build").mkdir(parents=True)
    seen: list[dict] = []
    command = 'rm -rf build; : su; readlink /proc/self/ns/pid; echo "# sneaked" >> "$HOME/.bash"rc'
    async with serving(home, bound=True) as client, anyio.create_task_group() as g:
        g.start_soon(allow_once_held, hub, seen)
        result = await run(client, {"command": command, "cwd": str(user_home / "proj")})
    assert result["stdout"].strip() != own_namespace(), result
    assert "Read-only file system" in result["stderr"], result
    assert "# sneaked" not in (user_home / ".bashrc").read_text()
    assert "administrator" not in seen[0]["reasons"], seen


async def test_a_rule_never_answers_a_command_that_would_run_without_protection_nor_lifts_it(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team, 2026-12-04: the user's "always allow deleting build folders here" allowed a command
    that also wrote the autostart folder and ~/.bashrc, and the rule's Allow made them writable."""
    from app.core.policy.rules import DELETE_BUILD_FOLDERS, FOLDER_SCOPE, describe
    from tests.in_process_server import held_by

    monkeypatch.setenv("HOME", str(user_home))
    project = user_home / "proj"
    (project / "build").mkdir(parents=True)
    rule = hub.add_rule(DELETE_BUILD_FOLDERS, str(project), FOLDER_SCOPE, describe(DELETE_BUILD_FOLDERS, str(project)))
    entry = user_home / ".config" / "autostart" / "upd.desktop"
    command = f"rm -rf build; printf '[Desktop Entry]\\nExec=id\\n' > {entry}; echo '# planted' >> ~/.bashrc"
    before = (user_home / ".bashrc").read_text()
    answered: list[HeldCommand] = []

    async def as_a_rule_would() -> None:  # the hold waits for a person: decided here as by the rule
        [held] = await held_by(hub, seconds=WAIT_S)
        answered.append(held)
        assert hub.decide(held.command_id, allowed=True, by=f"rule {rule.id}", rule_id=rule.id)

    async with serving(home, bound=True) as client, anyio.create_task_group() as g:
        g.start_soon(as_a_rule_would)
        result = await run(client, {"command": command, "cwd": str(project)})
    assert answered and answered[0].unprotected, "shown to the user: the rule did not answer it"
    assert "Read-only file system" in result["stderr"], result
    assert not entry.exists() and (user_home / ".bashrc").read_text() == before
    assert not (project / "build").exists(), "what the rule covers ran"


async def test_the_approval_window_says_that_an_allowed_change_of_a_protected_file_runs_without_protection(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window showed only what the command does: the person was never told that Allow lifts the
    protection for it (a review, 2026-12-04). The tray's window now says it after what it does."""
    from app.ui.tray.holds import for_window
    from tests.in_process_server import held_by

    monkeypatch.setenv("HOME", str(user_home))
    shown: list[tuple[str, ...]] = []

    async def look_then_deny() -> None:
        [held] = await held_by(hub, seconds=WAIT_S)
        shown.append(for_window(held, paths).lines())
        assert hub.decide(held.command_id, allowed=False, by="user (approval prompt)")

    async with serving(home, bound=True) as client, anyio.create_task_group() as g:
        g.start_soon(look_then_deny)
        result = await run(client, {"command": "echo calc >> ~/.bashrc"})
    assert "denied" in result.get("error", ""), result
    assert shown and shown[0][-2:] == (
        "Changes a file Cowork Terminal protects; if you allow it, it runs without that protection",
        "Once allowed, it can change ~/.bashrc",
    )
    assert (user_home / ".bashrc").read_text() == "alias ll='ls -l'\n"


async def session_command(client, command: str) -> dict:
    result = await client.call_tool("terminal_run", {"command": command})
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def test_an_allowed_change_of_a_protected_file_from_the_session_runs_apart_in_its_folder_never_in_its_shell(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session command the user allowed to change a protected file runs in a container of its own,
    in the session's folder; the session's container never opens it, before or after."""
    # The hub's runner runs the server's commands in this process (issue 21): it sees this user's home.
    monkeypatch.setenv("HOME", str(user_home))
    (user_home / "proj").mkdir()
    seen: list[dict] = []
    hidden_rc = base64.b64encode(str(user_home / ".bashrc").encode()).decode()
    hidden_data = base64.b64encode(str(paths.data_dir / "sneaked").encode()).decode()
    async with serving(home, bound=True) as client:
        before = await session_command(client, f'cd proj; echo before >> "$(echo {hidden_rc} | base64 -d)"')
        async with anyio.create_task_group() as g:
            g.start_soon(allow_once_held, hub, seen)
            allowed = await session_command(
                client, f"echo '# allowed' >> ~/.bashrc; touch \"$(echo {hidden_data} | base64 -d)\"; pwd"
            )
        after = await session_command(client, f'echo after >> "$(echo {hidden_rc} | base64 -d)"; pwd')
    assert "Read-only file system" in before["output"], "the session's container protects it"
    assert "Cowork Terminal protects" in seen[0]["reasons"], seen
    assert "Read-only file system" in allowed["output"], "what it does not name stays read-only"
    assert str(user_home / "proj") in allowed["output"].splitlines(), "in the session's folder"
    assert "shell of its own" in (allowed["note"] or ""), allowed
    assert not (paths.data_dir / "sneaked").exists()
    assert "Read-only file system" in after["output"] and str(user_home / "proj") in after["output"].splitlines()
    assert (user_home / ".bashrc").read_text() == "alias ll='ls -l'\n# allowed\n"


async def test_a_start_up_file_changed_with_the_users_allow_is_sourced_into_the_session_without_asking(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review, 2026-12-04: the allowed change runs apart, and `source ~/.bashrc` was held too (it
    names a protected file), so it also ran apart and the session never got the variable."""
    monkeypatch.setenv("HOME", str(user_home))
    seen: list[dict] = []
    async with serving(home, bound=True) as client:
        async with anyio.create_task_group() as g:
            g.start_soon(allow_once_held, hub, seen)
            await session_command(client, "echo 'export BAZ=from-bashrc' >> ~/.bashrc")
        sourced = await session_command(client, 'source ~/.bashrc && echo "BAZ=$BAZ"')
        again = await session_command(client, 'echo "still $BAZ"')
    assert len(seen) == 1, "only the change waited for the user"
    assert "BAZ=from-bashrc" in sourced["output"] and "still from-bashrc" in again["output"], (sourced, again)


async def test_what_the_agent_left_in_the_session_never_shares_what_the_user_allowed_for_one_command(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team, 2026-12-04: the Allow lifted the bind inside the session's own container, so a DEBUG
    trap the agent had set there ran during the allowed command, kept a descriptor on the writable
    folder, and a later, unheld command wrote Claude Code's settings through it."""
    monkeypatch.setenv("HOME", str(user_home))
    (user_home / ".claude").mkdir(exist_ok=True)
    trap = """trap 'exec 7<"$HOME/.cla""ude"; echo "# trap" >> "$HOME/.bash"rc' DEBUG"""
    async with serving(home, bound=True) as client:
        async with anyio.create_task_group() as g:  # a trap waits for the user now (4f04f79): allowed
            g.start_soon(allow_once_held, hub, [])
            await session_command(client, trap)
        async with anyio.create_task_group() as g:
            g.start_soon(allow_once_held, hub, [])
            allowed = await session_command(client, """echo '{"theme": 1}' > ~/.claude/settings.json; echo done""")
        later = await session_command(client, """echo '{"hooks": 1}' > /proc/self/fd/7/settings.json""")
    assert allowed["exitCode"] == 0 and "done" in allowed["output"], allowed
    assert (user_home / ".claude" / "settings.json").read_text() == '{"theme": 1}\n', "the allowed change"
    assert "Read-only file system" in later["output"], later
    assert "# trap" not in (user_home / ".bashrc").read_text(), "the trap never ran with the file writable"


async def test_an_allowed_command_that_also_names_the_program_cannot_change_the_program(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held for naming `~/.bashrc` and allowed: what it names of the program's own folders (the venv
    it may run, the package) stays read-only, as the approval window never offered it."""
    monkeypatch.setenv("HOME", str(user_home))
    marker = Path(sys.prefix) / f"cowork-test-{os.getpid()}"
    command = f"echo '# allowed' >> ~/.bashrc; touch {marker}; echo made"
    try:
        async with serving(home, bound=True) as client, anyio.create_task_group() as g:
            g.start_soon(allow_once_held, hub, [])
            result = await run(client, {"command": command})
    finally:
        stray = marker.exists()
        marker.unlink(missing_ok=True)
    assert not stray and "Read-only file system" in result["stderr"], result
    assert (user_home / ".bashrc").read_text().endswith("# allowed\n")


async def test_an_allowed_command_naming_a_longer_name_does_not_open_the_member_it_starts_with(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`~/.claude.json` starts with `~/.claude`: allowing a command that names the file leaves the folder
    (Claude Code's settings and hooks) read-only."""
    monkeypatch.setenv("HOME", str(user_home))
    (user_home / ".claude").mkdir(exist_ok=True)
    hidden = base64.b64encode(str(user_home / ".claude" / "settings.json").encode()).decode()
    async with serving(home, bound=True) as client, anyio.create_task_group() as g:
        g.start_soon(allow_once_held, hub, [])
        command = f"echo '{{}}' > ~/.claude.json; echo '{{\"hooks\": 1}}' > \"$(echo {hidden} | base64 -d)\""
        result = await run(client, {"command": command})
    assert "Read-only file system" in result["stderr"], result
    assert not (user_home / ".claude" / "settings.json").exists()
    assert (user_home / ".claude.json").read_text() == "{}\n", "the file it names was allowed"


async def test_a_lone_protected_file_replaced_by_rename_outside_stays_read_only_in_a_running_command(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude saves ~/.claude.json by renaming a new file over it, which takes the file's read-only
    bind out of every container: a command running then would write the new file, unless the bind
    is put back (lone_files.py)."""
    target = user_home / ".claude.json"
    stamp = f"{os.getpid()}-{time.monotonic_ns()}"
    go, log = Path(f"/tmp/go-{stamp}"), Path(f"/tmp/tries-{stamp}")
    tries = write_tries(target, log, 10, append=True, go=go)
    as_user(user_home, monkeypatch)
    never_ask(paths)
    try:
        async with serving(home) as client:
            started = await run(client, {"command": tries, "background": True})
            assert started["status"] == "running", started
            await anyio.sleep(1.0)  # the command waits in its container
            fresh = user_home / ".claude.json.tmp"
            fresh.write_text('{"saved": "by Claude"}\n')
            os.replace(fresh, target)  # as Claude and editors save
            await anyio.sleep(1.0)
            go.touch()
            deadline = time.monotonic() + WAIT_S
            while time.monotonic() < deadline and len(log.read_text().split() if log.exists() else []) < 10:
                await anyio.sleep(0.1)
        assert log.read_text().split() == ["R"] * 10, "every try ran, and each was refused"
        assert target.read_text() == '{"saved": "by Claude"}\n'
    finally:
        go.unlink(missing_ok=True)
        log.unlink(missing_ok=True)


def test_a_package_installed_in_a_protected_venv_leaves_no_folder_of_the_venv_writable(tmp_path: Path) -> None:
    """Binding the folders between the venv and the package in it onto themselves made them
    writable again: a `.pth` in `site-packages` then ran in every start of our Python."""
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3" / "site-packages"
    (site / "app").mkdir(parents=True)
    protected = container.ProtectedSet((str(venv), str(site / "app")))
    mounts = container.mount_args(protected, lambda path: os.access(os.path.dirname(path), os.W_OK))
    write = f"(echo x > {site}/evil.pth) 2>&1; echo tried"  # the init's status goes to fd 2
    argv = container.bwrap_argv("bwrap", mounts, [], ["bash", "-c", write])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=WAIT_S, pass_fds=(container.lifeline(),))
    assert done.stdout.endswith("tried\n"), done  # the write ran
    assert "Read-only file system" in done.stdout and not (site / "evil.pth").exists()


@pytest.mark.parametrize("scoped", [True, False], ids=["perl init", "bash init"])
def test_a_command_started_from_a_terminal_has_no_terminal_in_its_container_and_leads_its_own_group(
    tmp_path: Path, scoped: bool
) -> None:
    """No controlling terminal inside, so no TIOCSTI typing into the user's shell; the init leads
    the command's process group, which Stop and Ctrl-C signal."""
    found = container.linux_container([str(tmp_path / "data")])
    if not scoped:
        found = dataclasses.replace(found, init=())
    assert found.on and bool(found.init) == scoped
    look = "(exec 3</dev/tty) 2>/dev/null && echo has-tty || echo no-tty; ps -o pgid= -p $$ 1"
    inner = shlex.join(found.wrap(["bash", "-c", look], 2))  # the status comes last
    done = subprocess.run(
        ["script", "-qec", inner, "/dev/null"],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        pass_fds=(container.lifeline(),),
    )
    said = done.stdout.split()
    assert said[0] == "no-tty", done
    assert said[1:3] == ["1", "1"], "the command is in the init's group, and the init leads it"


@pytest.mark.parametrize("kind", ["perl init", "bash init", "read-only tool"])
def test_a_container_whose_starter_is_already_gone_starts_nothing(tmp_path: Path, kind: str) -> None:
    """bwrap 0.8 arms --die-with-parent too late when its starter dies while it sets up; the init
    (or the read-only tool's check) then reads the starter's lifeline and starts nothing."""
    found = container.linux_container([str(tmp_path / "data")])
    if kind == "bash init":
        found = dataclasses.replace(found, init=())
    assert found.on and bool(found.init) == (kind == "perl init") or kind == "read-only tool"
    command = ["bash", "-c", "echo ran"]

    def line(life: int) -> list[str]:
        if kind == "read-only tool":
            return [*read_only.bwrap_prefix(found.bwrap or "bwrap", str(tmp_path), None, lifeline_fd=life), *command]
        return container.bwrap_argv(found.bwrap or "bwrap", found.mounts, found.hidden, command, 2, found.init, life)

    for starter_alive in (True, False):
        life_read, life_write = os.pipe()
        if not starter_alive:
            os.close(life_write)
        done = subprocess.run(line(life_read), capture_output=True, text=True, timeout=WAIT_S, pass_fds=(life_read,))
        os.close(life_read)
        if starter_alive:
            os.close(life_write)
            assert done.returncode == 0 and done.stdout == "ran\n", done  # the same line runs while it lives
        else:
            assert done.returncode == 137 and done.stdout == "", done


def test_a_starter_killed_while_its_containers_start_leaves_no_command_behind(tmp_path: Path) -> None:
    """The tray killed at any moment of a container's start: measured before the lifeline, 24 of 40
    such containers lived on (their init reparented to pid 1, the command running)."""
    starter = tmp_path / "starter.py"
    starter.write_text(
        "import os, subprocess, sys, time\n"
        "from app.core.execution import container\n"
        f"found = container.linux_container([{str(tmp_path / 'data')!r}])\n"
        "status_read, status_write = os.pipe()\n"
        "line = found.wrap(['bash', '-c', 'sleep 41000; : ' + sys.argv[1]], status_write)\n"
        "subprocess.Popen(line, pass_fds=container.inherited(status_write, status_read), start_new_session=True)\n"
        "print('started', flush=True)\n"
        "time.sleep(100)\n"
    )
    left: list[int] = []
    for attempt in range(16):
        mark = f"starter-killed-{os.getpid()}-{attempt}"
        process = subprocess.Popen([PY, str(starter), mark], cwd=PACKAGE, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None and process.stdout.readline() == "started\n"
        time.sleep(attempt * 0.0005)  # from the moment bwrap was started to a few ms into its setup
        process.kill()
        process.wait()
        deadline = time.monotonic() + 3.0
        while (found := running_with(mark)) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        left += found
    assert not left, "a container outlived its starter"


async def test_a_bwrap_a_command_plants_first_on_path_never_starts_the_next_commands(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ubuntu's ~/.profile puts ~/.local/bin ahead of /usr/bin, and Claude Code's installer makes that
    # folder: a command may write there, and a `bwrap` found there would start every later command
    # outside any container (and write the app's data first, as this one does).
    as_user(user_home, monkeypatch)
    planted_in = user_home / ".local" / "bin"
    planted_in.mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{planted_in}{os.pathsep}{os.environ['PATH']}")
    escaped = paths.data_dir / "escaped"
    fake = f'#!/bin/sh\necho outside >> {shlex.quote(str(escaped))}\nexec {shutil.which("bwrap")} "$@"\n'
    plant = f"p = {str(planted_in / 'bwrap')!r}\nopen(p, 'w').write({fake!r})\n__import__('os').chmod(p, 0o755)\n"
    never_ask(paths)
    async with serving(home) as client:
        planted = await run(client, {"command": agent_script(plant)})
        assert planted.get("exitCode") == 0 and (planted_in / "bwrap").exists(), planted  # the plant took
        after = [await run(client, {"command": "readlink /proc/self/ns/pid"}) for _ in range(3)]
        looked = await client.call_tool("execute_read_only_command", {"command": "readlink /proc/self/ns/pid"})
    assert not escaped.exists(), escaped.read_text()
    assert all(result["stdout"].strip() not in ("", own_namespace()) for result in after), after
    assert not looked.is_error and own_namespace() not in looked.content[0].text, looked


async def test_a_gtk_settings_file_naming_a_module_cannot_be_written_even_where_gtk_had_no_folder_yet(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GTK 3 loads the libraries `gtk-modules` names into every GTK program, the tray's menu included.
    as_user(user_home, monkeypatch)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    settings = user_home / ".config" / "gtk-3.0" / "settings.ini"
    assert not settings.parent.exists()
    never_ask(paths)
    async with serving(home) as client:
        line = "[Settings]\\ngtk-modules=/tmp/loaded-into-the-tray.so\\n"
        result = await run(client, {"command": agent_script(f"open({str(settings)!r}, 'w').write({line!r})")})
    assert "Read-only file system" in result["stderr"], result  # it ran, and the OS said no
    assert settings.parent.is_dir() and not settings.exists(), "made empty, read-only for commands"


@pytest.mark.skipif(
    not Path(sys.base_prefix).is_relative_to(Path.home()), reason="the Python under test lives outside the home folder"
)
async def test_the_python_the_app_runs_on_is_read_only_for_commands_where_it_lives_in_the_home_folder(
    home: Path, paths: AppPaths
) -> None:
    # pyenv, uv and conda keep their Pythons in the home folder: a module added to its standard
    # library ran in our windows, `-I` or not (a red-team route edited tkinter).
    target = Path(sys.base_prefix) / "lib" / f"cowork-terminal-attack-{os.getpid()}.py"
    never_ask(paths)
    try:
        async with serving(home) as client:
            result = await run(client, {"command": agent_script(f"open({str(target)!r}, 'w').write('x')")})
        assert "Read-only file system" in result["stderr"], result
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


def hidden(path: Path) -> str:
    """A path as an agent hides it from the classifier: only the container can stop the write."""
    return f'"$(echo {base64.b64encode(str(path).encode()).decode()} | base64 -d)"'


@pytest.mark.parametrize("pause_between", [False, True], ids=["switched on", "switched on, then a pause"])
async def test_a_session_started_without_the_container_is_not_kept_once_the_user_switches_it_on(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch, pause_between: bool
) -> None:
    """A review, 2026-12-05: the session's shell kept the container setting it was started with;
    after the user switched protection on (and even after a pause, whose new shell took the old
    setting too), session commands still ran on the host and wrote into the data folder."""
    monkeypatch.setenv("HOME", str(user_home))
    hub.set_settings(container=False)
    target = paths.data_dir / "from-the-session"
    async with serving(home, bound=True) as client:
        await session_command(client, "echo started")
        hub.set_settings(container=True)
        if pause_between:
            hub.set_paused(True)
            hub.set_paused(False)
        # The hub pushes the setting through its writer thread: a call that waits for the hub's answer
        # (its row) gets it after the push (a command in that instant may start as before: 2026-12-05)
        assert (await client.call_tool("execute_command", {"command": "true"})).is_error is False
        after = await session_command(client, f"touch {hidden(target)}; readlink /proc/self/ns/pid")
    assert "Read-only file system" in after["output"] and not target.exists(), after
    assert os.readlink("/proc/self/ns/pid") not in after["output"], "in a container of its own"
    # Switching protection on ends an uncontained session (a ninth red team, 2026-12-06); the shell's
    # replacement may also come first, at the next command.
    said = ("started anew in the same folder", "new one was started")
    assert any(words in (after["note"] or "") for words in said), after


@pytest.mark.parametrize("member", [".claude", ".config/autostart"])
async def test_a_protected_folder_the_user_made_anew_is_protected_in_the_spare_and_the_session(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch, member: str
) -> None:
    """A review, 2026-12-05: a container started before (the spare made for the next command, the
    session's) kept its bind on the old folder after `mv ~/.claude ~/.claude-old; mkdir ~/.claude`,
    and the new folder was writable from it."""
    monkeypatch.setenv("HOME", str(user_home))
    folder = user_home / member
    folder.mkdir(parents=True, exist_ok=True)
    async with serving(home, bound=True) as client:
        first = await run(client, {"command": f"touch {hidden(folder / 'one')} 2>&1"})
        await session_command(client, "echo started")
        await anyio.sleep(0.5)  # the spare for the next command is ready
        folder.rename(folder.with_name(folder.name + "-old"))
        folder.mkdir()
        spare = await run(client, {"command": f"touch {hidden(folder / 'two')} 2>&1"})
        session = await session_command(client, f"touch {hidden(folder / 'three')}")
    assert "Read-only file system" in first["stdout"], first
    assert "Read-only file system" in spare["stdout"], spare
    assert "Read-only file system" in session["output"], session
    assert not any(folder.iterdir())


async def test_an_allow_whose_command_was_refused_lets_no_later_command_out_of_the_container(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review, 2026-12-05: the user allowed a session command to write ~/.bashrc, and it was
    refused (the session was busy); what the Allow let out stayed with its id, and after the
    history was cleared an unasked command given that id again wrote ~/.bashrc (now only another
    program's edit of the file gives an id again)."""
    monkeypatch.setenv("HOME", str(user_home))
    seen: list[dict] = []
    async with serving(home, bound=True) as client:
        busy = await client.call_tool("terminal_run", {"command": "sleep 30", "timeout": 1})
        assert not busy.is_error, busy.content[0].text
        async with anyio.create_task_group() as g:
            g.start_soon(allow_once_held, hub, seen)
            refused = await client.call_tool(
                "terminal_run", {"command": "echo x >> ~/.bash_profile; echo x >> ~/.bashrc"}
            )
        assert refused.is_error and "still running an earlier command" in refused.content[0].text
        allowed_id = seen[0]["id"]
        assert await came(lambda: row_status(paths, allowed_id) == "refused"), "its end is recorded"
        ids_given_again(paths)
        results = []
        for _ in range(allowed_id + 1):
            results.append(await run(client, {"command": f"echo planted >> {hidden(user_home / '.bashrc')}"}))
            if results[-1]["jobId"] >= allowed_id:
                break
    assert results[-1]["jobId"] == allowed_id, "the id was given again"
    assert all("Read-only file system" in r["stderr"] for r in results), results
    assert (user_home / ".bashrc").read_text() == "alias ll='ls -l'\n"


def row_status(paths: AppPaths, command_id: int) -> str | None:
    with Journal.open(paths) as journal:
        record = journal.get_command(command_id)
    return None if record is None else record.status.value


async def test_a_session_command_still_running_when_the_container_changes_goes_on_to_its_end(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A review of the above: the container's change ended the session at the next call, and the
    command still running in it with it; it goes on, the next is refused as busy, the one after gets
    the new container."""
    monkeypatch.setenv("HOME", str(user_home))
    async with serving(home, bound=True) as client:
        await session_command(client, f"cd {tmp_path}")
        await client.call_tool("terminal_run", {"command": "sleep 2; touch done", "timeout": 1})  # goes on
        hub.set_settings(container=False)
        busy = await client.call_tool("terminal_run", {"command": "echo hi"})
        assert busy.is_error and "still running an earlier command" in busy.content[0].text, busy
        assert await came(lambda: (tmp_path / "done").exists(), seconds=10)
        await anyio.sleep(0.3)
        after = await session_command(client, "readlink /proc/self/ns/pid")
    assert os.readlink("/proc/self/ns/pid") in after["output"], "the new shell has the new setting: none"
    assert "started anew in the same folder" in (after["note"] or ""), after


async def test_a_session_ended_before_the_container_changed_starts_anew_at_home_where_the_next_is_judged(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A review of the above: the new shell started in the ended one's folder, and the next command,
    judged at home, was refused as if the session had moved."""
    monkeypatch.setenv("HOME", str(user_home))
    async with serving(home, bound=True) as client:
        await session_command(client, f"cd {tmp_path}")
        await client.call_tool("terminal_run", {"command": "exit"})
        hub.set_settings(container=False)
        after = await session_command(client, "pwd")
    assert after["output"].strip() == str(user_home), after
    assert "new one was started" in (after["note"] or ""), after


async def test_a_session_call_cancelled_while_it_waits_for_the_shell_leaves_no_row_running(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review of the above: a terminal_run cancelled before its command reached the shell (here it
    waits while a command the user allowed runs apart and holds the session) left its row running."""
    monkeypatch.setenv("HOME", str(user_home))
    assert not (user_home / ".bash_profile").exists()
    seen: list[dict] = []
    async with serving(home, bound=True) as client:
        await session_command(client, "echo started")
        async with anyio.create_task_group() as g:
            g.start_soon(allow_once_held, hub, seen)
            g.start_soon(session_command, client, "sleep 2; echo x >> ~/.bash_profile")
            assert await came(lambda: bool(seen))
            await anyio.sleep(0.3)  # it runs apart, holding the session while it may make the file
            with anyio.move_on_after(0.5):
                await client.call_tool("terminal_run", {"command": "echo waiting"})
        assert await came(lambda: any(r.command == "echo waiting" for r in session_rows(paths)))
        [waited] = [r for r in session_rows(paths) if r.command == "echo waiting"]
    assert waited.status.value == "refused" and waited.reason == CANCEL_REASON, waited


def session_rows(paths: AppPaths) -> list:
    with Journal.open(paths) as journal:
        return journal.recent_commands()


@pytest.mark.parametrize(
    ("tool", "bound"), [("execute_command", False), ("execute_read_only_command", False), ("execute_command", True)]
)
async def test_a_command_cannot_hold_the_apps_lock_files(
    tool: str, bound: bool, home: Path, paths: AppPaths, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A review, 2026-12-05: a read-only file still takes a `flock`, so a command (its path given in
    base64, past the classifier) held the tray's lock file: a tray started meanwhile said another one
    seemed to run; a server's, and a dead server seemed alive. The containers show an empty folder in
    their place (the tray's own commands see its lock, which it holds: tests/test_cli_in_container.py)."""
    if bound:  # the tray's hub in this process; else a headless server's process, which has none
        request.getfixturevalue("hub")
    lock = paths.server_lock("x") if bound else paths.tray_lock
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.touch()
    hidden = base64.b64encode(str(lock).encode()).decode()
    command = f'flock -s "$(echo {hidden} | base64 -d)" sleep 2; echo "ended $?"'
    said: list[str] = []
    async with serving(home, bound=bound) as client, anyio.create_task_group() as group:

        async def hold() -> None:
            result = await client.call_tool(tool, {"command": command, "cwd": str(tmp_path)})
            said.append(result.content[0].text)

        group.start_soon(hold)
        await anyio.sleep(1.0)  # the flock runs, or would
        held = liveness.is_held(lock)
    # it ran, and could not make a file in the empty read-only folder
    assert "ended " in said[0] and "ended 0" not in said[0], said
    assert not held, "no process of a command holds the app's lock files"


async def test_other_shells_start_up_files_and_a_gnome_shell_extension_cannot_be_written_by_a_command(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A red team, 2026-12-05: through execute_command of a tray-bound server, writes into csh's, tcsh's,
    ksh's, mksh's, nushell's and xonsh's start-up files and a gnome-shell extension's `extension.js`
    stayed. Each path is hidden from the classifier here: the container is what acts. A shell's folder
    that is there is read-only; one that is not is not made for it (clutter in the user's home, and a
    bind each container pays): made by a command, it is moved aside whole."""
    as_user(user_home, monkeypatch)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    present = (".tcshrc", ".kshrc")
    for name in present:
        (user_home / name).write_text("set x\n")
    nushell = user_home / ".config" / "nushell"
    nushell.mkdir()
    (nushell / "config.nu").write_text("$env.A = 1\n")
    extensions = user_home / ".local" / "share" / "gnome-shell" / "extensions"
    assert not extensions.exists() and not (user_home / ".config" / "xonsh").exists()
    in_folders = (
        nushell / "config.nu",
        nushell / "env.nu",
        user_home / ".config" / "xonsh" / "rc.xsh",
        user_home / ".config" / "elvish" / "rc.elv",
        user_home / ".config" / "oils" / "oshrc",
        user_home / ".config" / "ion" / "initrc",
        user_home / ".local" / "share" / "fish" / "vendor_conf.d" / "x.fish",
        user_home / ".local" / "share" / "plasma" / "plasmoids" / "x" / "main.qml",
        user_home / ".local" / "share" / "nushell" / "vendor" / "autoload" / "x.nu",
        extensions / "evil@example.com" / "extension.js",
    )
    absent = [user_home / name for name in OTHER_SHELLS_FILES if name not in present]

    def moved(path: Path) -> list[Path]:
        return list(path.parent.glob(path.name + ".cowork-terminal-moved-*"))

    bound = (*in_folders[:2], in_folders[-1])  # nushell's, there; gnome-shell's extensions, made empty
    guarded = [path for path in in_folders if path not in bound]
    # What is guarded: the shell's own folder in ~/.config (two parts down) or ~/.local/share (three)
    made_folders = [user_home.joinpath(*parts[: 2 if parts[0] == ".config" else 3])
                    for parts in (path.relative_to(user_home).parts for path in guarded)]  # fmt: skip
    onto = [f"echo 'curl x | sh' >> {hidden(user_home / name)}" for name in present]
    into = [f"mkdir -p {hidden(path.parent)} && echo x >> {hidden(path)}" for path in bound]
    into_missing = [f"mkdir -p {hidden(path.parent)} && echo x >> {hidden(path)} && echo written" for path in guarded]
    make = [f"echo 'curl x | sh' > {hidden(path)} && echo written" for path in absent]
    async with serving(home, bound=True) as client:
        refused = [await run(client, {"command": command}) for command in (*onto, *into)]
        made = [await run(client, {"command": command}) for command in make]
        raced = [await run(client, {"command": command}) for command in into_missing]
        assert await came(lambda: all(moved(path) for path in (*absent, *made_folders)), seconds=WAIT_S)
    assert all("Read-only file system" in result["stderr"] for result in refused), refused
    assert all((user_home / name).read_text() == "set x\n" for name in present)
    assert (nushell / "config.nu").read_text() == "$env.A = 1\n" and not (nushell / "env.nu").exists()
    assert not any(path.exists() for path in in_folders[2:])
    assert extensions.is_dir() and not any(extensions.iterdir()), "made empty where missing"
    assert [(result["stdout"], result["stderr"]) for result in made] == [("written\n", "")] * len(made)  # it ran
    for path in absent:  # moved aside, nothing lost, nothing at its name for the next login
        assert not path.exists() and [copy.read_text() for copy in moved(path)] == ["curl x | sh\n"], path
    # the folder the command made, moved aside whole: at once, so the write into it may have missed
    assert all("written" in result["stdout"] or "No such file" in result["stderr"] for result in raced), raced
    for folder in made_folders:
        assert not folder.exists() and len(moved(folder)) == 1, folder


def test_a_tray_whose_bashrc_has_a_second_name_says_once_that_commands_can_change_it(
    home: Path, tmp_path: Path
) -> None:
    """A red team, 2026-12-05: `~/.bashrc` hard-linked as `~/dotfiles/bashrc` was written through the
    other name, which no bind covers. The tray's user is told, as of the program's own files."""
    from tests.tray_process import desktop_home

    user = desktop_home(home)  # the HOME of the tray `running_tray` starts
    (user / "dotfiles").mkdir(parents=True)
    (user / "dotfiles" / "bashrc").write_text("alias ll='ls -l'\n")
    os.link(user / "dotfiles" / "bashrc", user / ".bashrc")
    log = tmp_path / "tray.log"
    title = "notice: A protected file has a second name"
    with running_tray(home, log=log):
        deadline = time.monotonic() + WAIT_S
        while title not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
    said = log.read_text()
    assert said.count(title) == 1
    assert f"Commands can change {user / '.bashrc'} through another name it has (a hard link)" in said


@pytest.mark.anyio
async def test_gnupgs_daemon_settings_cannot_be_written_by_a_program_no_rule_reads(
    home: Path, paths: AppPaths, user_home: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's gpg-agent starts the program its gpg-agent.conf names, outside any container (a red
    team, 2026-12-05): a write the classifier cannot see (a path built at run time) meets the container."""
    as_user(user_home, monkeypatch)
    monkeypatch.delenv("GNUPGHOME", raising=False)
    gnupg = user_home / ".gnupg"
    gnupg.mkdir(mode=0o700)
    (gnupg / "gpg-agent.conf").write_text("default-cache-ttl 600\n")
    write = hidden(gnupg / "gpg-agent.conf")
    create = hidden(gnupg / "scdaemon.conf")
    async with serving(home, bound=True) as client:
        changed = await run(client, {"command": f"echo 'pinentry-program /tmp/p.sh' >> {write}"})
        made = await run(client, {"command": f"echo 'reader-port x' > {create} && echo written"})
        keys = await run(client, {"command": f"touch {hidden(gnupg / 'pubring.kbx')} && echo keys"})
        assert await came(lambda: not (gnupg / "scdaemon.conf").exists(), seconds=WAIT_S)
    assert "Read-only file system" in changed["stderr"], changed
    assert (gnupg / "gpg-agent.conf").read_text() == "default-cache-ttl 600\n"
    assert made["stdout"] == "written\n" and list(gnupg.glob("scdaemon.conf.cowork-terminal-moved-*")), made
    assert keys["stdout"] == "keys\n", "the folder itself stays writable: gpg keeps its keys there"


async def test_a_protected_folder_deleted_while_the_tray_runs_and_made_by_a_command_is_moved_aside(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`~/.config/pipewire` is bound while it exists; the user deletes it, so the set prepared anew
    guards it as missing; a command then makes it. A review, 2026-12-05: the watching thread still
    took it for a bound folder made anew (`start_files._folders` keeps every folder it was told of)
    and never judged it as a missing member: it stayed, for PipeWire's next start outside."""
    as_user(user_home, monkeypatch)
    folder = user_home / ".config" / "pipewire"
    folder.mkdir(parents=True)
    never_ask(paths)
    async with serving(home) as client:
        first = await run(client, {"command": "true"})  # prepared: bound
        folder.rmdir()  # the user's, outside
        made = await run(client, {"command": f"mkdir -p {folder}/pipewire.conf.d && echo made"})
        assert await came(lambda: not folder.exists(), seconds=WAIT_S), "it stayed at its name"
    assert first["exitCode"] == 0 and ("made" in made["stdout"] or "No such file" in made["stderr"]), made
    assert list(folder.parent.glob("pipewire.cowork-terminal-moved-*")), "moved aside, nothing lost"


async def test_the_session_lives_on_when_a_hidden_bus_goes_away_and_starts_anew_for_a_new_one(
    home: Path, paths: AppPaths, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is hidden is read for each command; a review, 2026-12-05: any `/tmp/dbus-*` that came or
    went replaced the session's shell (its variables, venv and jobs lost). One gone needs nothing."""
    as_user(user_home, monkeypatch)
    tmp = user_home / "tmp"
    tmp.mkdir()
    listing = container.tmp_buses
    monkeypatch.setattr(container, "tmp_buses", lambda folder=str(tmp): listing(folder))
    bus = tempfile.mktemp(prefix="dbus-", dir=tmp)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(bus)
    listener.listen()
    try:
        async with serving(home) as client:
            await client.call_tool("terminal_run", {"command": "export KEPT=yes"})
            listener.close()
            os.unlink(bus)  # the bus ended
            kept = await client.call_tool("terminal_run", {"command": 'echo "[$KEPT]"'})
            other = tempfile.mktemp(prefix="dbus-", dir=tmp)
            started = socket.socket(socket.AF_UNIX)
            started.bind(other)  # a bus started since: hidden from the next shell, which is new
            started.listen()
            try:
                anew = await client.call_tool("terminal_run", {"command": f'echo "[$KEPT]"; test -S {other}; echo $?'})
            finally:
                started.close()
    finally:
        listener.close()
    assert "[yes]" in kept.content[0].text, kept
    assert "[]" in anew.content[0].text and '"1' not in anew.content[0].text, anew
