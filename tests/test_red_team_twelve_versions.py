"""A red team, 2026-12-06 (twelfth, versions and lifecycle): what a person's update, downgrade or
uninstall does while agents work. Each test fails today because the defect it names is real; its
docstring says what it does and what went wrong."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.journal.schema import SCHEMA_VERSION
from app.core.journal.store import Journal
from app.core.paths import HOME_ENV, AppPaths
from tests.raw_stdio import RawServer
from tests.stdio_client import FIRST_CALL_DEADLINE_S
from tests.tray_process import (
    REAL_HOMES,
    TRAY_START_S,
    connect_claude_desktop,
    desktop_home,
    isolated_desktop_env,
    running_tray,
)

CLI_TIMEOUT_S = 60.0


def journal_of_a_newer_version(paths: AppPaths) -> None:
    """The journal as a later Cowork Terminal leaves it once it raised the schema's version (what a
    person who downgrades, or runs an older copy beside a newer one, finds)."""
    Journal(paths).close()
    with contextlib.closing(sqlite3.connect(paths.journal)) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        db.commit()


def cli(cli_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args], env=cli_env, capture_output=True, text=True, timeout=CLI_TIMEOUT_S
    )


def answered(server: RawServer, tool: str, arguments: str) -> str:
    """What the model reads of one call ("ERROR: " first for an error result); a JSON-RPC error is
    given as its JSON. An AssertionError (not a BrokenPipeError) when the server never answers."""
    try:
        answer = server.answer(server.send_call(tool, arguments))
    except BrokenPipeError:
        answer = None
    assert answer is not None, f"{tool} got no answer: the server's exit code is {server.wait(5.0)}"
    if "result" not in answer:
        return json.dumps(answer)
    result = answer["result"]
    texts = [c.get("text", "") for c in result.get("content", [])]
    return ("ERROR: " if result.get("isError") else "") + "".join(texts)


# -- a journal written by a newer version ----------------------------------------------------------


def test_serve_with_a_newer_versions_journal_dies_after_initialize_instead_of_answering_in_words(
    home: Path, paths: AppPaths
) -> None:
    """The journal's schema version is one above this version's (a newer Cowork Terminal wrote it;
    the person went back to an older one, or Claude's config runs an older copy). Claude starts
    `serve --headless`, initializes and calls execute_command. What went wrong: `initialize` is
    answered, then the host side opens the journal, `schema.migrate` raises a bare RuntimeError
    ("written by a newer Cowork Terminal ... Update the app."), which `HostSide.open` does not catch
    (it catches only DataFolderError), and the process dies with a traceback on stderr: the call gets
    no answer but the JSON-RPC error "Connection closed" (or none at all), and Claude shows the
    server as failed. A `serve` without --headless dies the same way (seen with no tray; it opens the
    journal in `HostSide.open` before it looks for a tray). docs/failures.md: "`serve` does not die:
    when the journal cannot be opened it serves with a ServiceUnavailable ... the gate answers
    every call with the reason". What should happen: the call is answered with those words (update
    the app), and the server stays up."""
    journal_of_a_newer_version(paths)
    server = RawServer(home, "--headless")
    try:
        assert server.initialize() is not None
        said = answered(server, "execute_command", '{"command": "echo hi"}')
        assert said.startswith("ERROR: ") and "was written by a newer Cowork Terminal" in said, said
        assert "install the newer Cowork Terminal again" in said and "move that file" in said, said
        assert server.process.poll() is None, "the server must stay up and answer the next call too"
        assert "newer Cowork Terminal" in answered(server, "execute_command", '{"command": "echo again"}')
    finally:
        server.close()


def test_the_cli_shows_a_traceback_for_a_newer_versions_journal(paths: AppPaths, cli_env: dict[str, str]) -> None:
    """Same journal (schema one above this version's); the person runs `cowork-terminal status` and
    `cowork-terminal log`. What went wrong: each prints a Python traceback ending in
    "RuntimeError: The journal at ... was written by a newer Cowork Terminal" (exit 1): the RuntimeError
    of `schema.migrate` is not a CoworkError, so `cli.main` does not say it in one line.
    docs/failures.md: "No entry point prints a traceback for any of these". What should happen: one
    line, `cowork-terminal: ... newer ... Update the app.`, and no traceback."""
    journal_of_a_newer_version(paths)
    for args in (("status",), ("log",)):
        done = cli(cli_env, *args)
        assert "Traceback" not in done.stderr, f"`cowork-terminal {' '.join(args)}`:\n{done.stderr[-600:]}"
        assert done.returncode != 0 and "newer" in done.stderr, done.stderr
        assert "Install the newer Cowork Terminal again" in done.stderr, done.stderr


def test_the_tray_with_a_newer_versions_journal_dies_with_a_traceback(
    paths: AppPaths, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Same journal; the person's tray starts (at login, from the menu). What went wrong: `TrayApp`
    opens the journal, `schema.migrate` raises the RuntimeError, and `run_tray` (which turns a
    DataFolderError into one line and, where nobody reads stderr, a problem window) lets it through:
    the tray exits 1 with a traceback, and started from the desktop it says nothing to the person at
    all. What should happen: as for a data folder it cannot use, the reason in words (and the
    problem window), no traceback."""
    journal_of_a_newer_version(paths)
    env = {**cli_env, "HOME": str(tmp_path / "desktop-home"), "PYSTRAY_BACKEND": "dummy"}
    env.pop("DISPLAY", None)
    for name, folder in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share")):
        env[name] = str(tmp_path / "desktop-home" / folder)
    done = subprocess.run(
        [sys.executable, "-m", "app", "tray"], env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT_S
    )
    assert "Traceback" not in done.stderr, done.stderr[-600:]
    assert done.returncode != 0 and "newer" in done.stderr, done.stderr[-600:]


def test_uninstall_is_impossible_with_a_newer_versions_journal(home: Path, paths: AppPaths, tmp_path: Path) -> None:
    """Same journal (schema one above this version's): the person, back on an older version, wants
    the app gone and runs `cowork-terminal uninstall --yes`; Claude Desktop's config holds the app's
    entry. What went wrong: the plan lists the live servers through the journal
    (`app_processes.live_servers`), the RuntimeError of `schema.migrate` ends the command with a
    traceback before any step, and Claude Desktop keeps the entry (so it starts `serve` again,
    which dies: see above). The advice inside the traceback, "Update the app", is not what a person
    uninstalling can do. What should happen: the entry is removed (the servers' list read as far as
    it can be, or said it could not be), in words, no traceback."""
    from app.core.claude.locations import desktop_config_path

    journal_of_a_newer_version(paths)
    env = isolated_desktop_env(os.environ, desktop_home(home), REAL_HOMES)
    Path(env["HOME"]).mkdir(parents=True, exist_ok=True)
    connect_claude_desktop(env, home)
    env[HOME_ENV] = str(home)
    config = Path(desktop_config_path(sys.platform, env, Path(env["HOME"])))
    assert "cowork-terminal" in json.loads(config.read_text())["mcpServers"]
    done = subprocess.run(
        [sys.executable, "-m", "app", "uninstall", "--yes"], env=env, capture_output=True, text=True,
        timeout=CLI_TIMEOUT_S,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr[-600:]
    assert "cowork-terminal" not in json.loads(config.read_text()).get("mcpServers", {}), done.stdout + done.stderr
    assert done.returncode == 0 and "Removed Cowork Terminal from Claude Desktop" in done.stdout, done.stdout


# -- a row of a status this version does not know ----------------------------------------------------


def a_row_of_an_unknown_status(paths: AppPaths) -> None:
    """One finished command of this version's, and one row whose status this version does not know
    (a later version's new status, or a row another program edited): the journal's status column is
    free text, so a new status needs no schema change, and an older app opens the file."""
    with Journal(paths) as journal:
        server = journal.register_server(4242, headless=True, lock_key=None)
        first = journal.begin_command(
            server_id=server, server_pid=4242, client_name="claude-ai", client_version="1",
            tool="execute_command", command="echo first", cwd="/tmp", env_keys=[], timeout_ms=1000, tier="safe",
        )  # fmt: skip
        journal.finish_command(first, _finished())
    with contextlib.closing(sqlite3.connect(paths.journal)) as db:
        db.execute(
            "INSERT INTO commands (server_id, server_pid, tool, command, cwd, env_keys, timeout_ms, tier, status, "
            "created_at) SELECT server_id, server_pid, tool, 'echo second', cwd, env_keys, timeout_ms, tier, "
            "'queued', created_at + 1 FROM commands WHERE id = ?",
            (first,),
        )
        db.commit()


def _finished():  # noqa: ANN202 - the journal's Outcome
    from app.core.journal.store import Outcome, Status

    return Outcome(status=Status.FINISHED, exit_code=0)


def test_one_row_of_a_status_this_version_does_not_know_makes_the_whole_log_unreadable(
    paths: AppPaths, cli_env: dict[str, str]
) -> None:
    """The journal holds a finished command and one row whose status is 'queued' (a status this
    version does not know: a newer version's, or another program's edit). The person runs
    `cowork-terminal log` and `cowork-terminal log --json`. What went wrong: each prints a traceback
    ending in "ValueError: 'queued' is not a valid Status" (`CommandRecord.from_row` reads the status
    with `Status(...)`), and the finished command is not listed either: one row the app does not
    understand hides the whole record. What should happen: every row is listed, the unknown one with
    its status as written (or as 'unknown'), no traceback."""
    a_row_of_an_unknown_status(paths)
    for args in (("log",), ("log", "--json")):
        done = cli(cli_env, *args)
        assert "Traceback" not in done.stderr, f"`cowork-terminal {' '.join(args)}`:\n{done.stderr[-500:]}"
        assert "echo first" in done.stdout and "echo second" in done.stdout, done.stdout


def test_command_output_of_a_row_of_an_unknown_status_is_a_bare_error(home: Path, paths: AppPaths) -> None:
    """Same journal; a headless server's model calls command_output for the row of the unknown status
    (job 2). What went wrong: the call's answer is "Error executing tool command_output" and nothing
    else (the ValueError of `CommandRecord.from_row` reached the SDK, which hides it): the model is
    not told what the job is, nor what to do next. What should happen: an answer in words (the
    job's status as written, or that this version cannot read it)."""
    a_row_of_an_unknown_status(paths)
    server = RawServer(home, "--headless")
    try:
        assert server.initialize() is not None
        said = answered(server, "command_output", json.dumps({"jobId": 2}))
        assert said.strip() != "ERROR: Error executing tool command_output", said
    finally:
        server.close()


def test_the_tray_stops_at_start_when_the_newest_row_has_a_status_this_version_does_not_know(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """Same journal (the newest row's status is 'queued'); the person's tray starts. What went wrong:
    within a second the tray's monitor thread fails (`Supervisor.__init__` reads
    `journal.recent_commands(limit=1)`, whose `CommandRecord.from_row` raises ValueError), the
    tray tells the person "An internal error stopped Cowork Terminal, so Claude's commands are
    refused until you start it again" and exits; every start after that ends the same way, so the
    person cannot use the app at all until the row is gone (which nothing tells them), and a
    person back on an older version after a newer one added a status is locked out. What should
    happen: the tray runs, and the row is shown with its status as written."""
    a_row_of_an_unknown_status(paths)
    env = isolated_desktop_env(os.environ, desktop_home(home), REAL_HOMES)
    Path(env["HOME"]).mkdir(parents=True, exist_ok=True)
    connect_claude_desktop(env, home)
    env.update({HOME_ENV: str(home), "PYSTRAY_BACKEND": "dummy"})
    env.pop("DISPLAY", None)
    log = tmp_path / "tray.log"
    with open(log, "ab") as out:
        tray = subprocess.Popen([sys.executable, "-m", "app", "tray", "--verbose"], env=env, stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 8.0
        while time.monotonic() < deadline and tray.poll() is None:
            time.sleep(0.1)
        errors = [line for line in log.read_text().splitlines() if "ERROR" in line or "Error" in line]
        assert tray.poll() is None, f"the tray exited (code {tray.returncode}): {errors[-3:]}"
    finally:
        if tray.poll() is None:
            tray.terminate()
            try:
                tray.wait(10)
            except subprocess.TimeoutExpired:
                tray.kill()
                tray.wait()


# -- the interpreter's file replaced under a running tray --------------------------------------------


def python_of_its_own(folder: Path, source: Path | None = None) -> Path:
    """A venv whose python is a copy of this one's program (not a link), seeing this venv's packages
    and the `app` in `source` (this checkout's by default): its own install, as pip makes one, which
    `python -I -m app` (how the tray starts its windows) finds. What an update replaces in place."""
    subprocess.run([sys.executable, "-m", "venv", "--copies", "--without-pip", str(folder)], check=True, timeout=120)
    site = next((folder / "lib").glob("python3*/site-packages"))
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    first = source or Path(__file__).parents[1]
    (site / "cowork_test_deps.pth").write_text("\n".join([str(first), *ours]) + "\n")
    return folder / "bin" / "python"


def replace_in_place(program: Path) -> None:
    """As a package manager does: the new file written beside, then renamed over the old one."""
    fresh = program.with_name(program.name + ".new")
    shutil.copy2(program, fresh)
    os.replace(fresh, program)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="root reads the tray's program link")
def test_after_an_update_replaces_pythons_file_every_new_server_takes_the_real_tray_for_an_impostor(
    home: Path, tmp_path: Path
) -> None:
    """A source install whose Python is a file of its own (a venv made with --copies; the same holds
    for the system's /usr/bin/python3.x that a venv links to, and for the frozen program). The tray
    runs; an update replaces that program file in place (new file renamed over the old one: apt,
    pyenv, a reinstall). Claude then starts a new `serve` (the same path, now the new file) and calls
    execute_command. What went wrong: the kernel now names the running tray's program
    "<path> (deleted)", `peer.tray_refusal` compares that text with the server's own program path,
    and the genuine tray is refused: the model reads "Cowork Terminal is not running on this
    computer ... (A program that is not Cowork Terminal answered instead: the process at the tray's
    address is not Cowork Terminal (.../python (deleted)).)", every call of every new server is
    refused until the person restarts the tray, and neither the person nor the model is told that
    an update is the cause. (As root here: without root's powers the tray's program is hidden and
    only its arguments are checked.) What should happen: the tray that runs the replaced program is
    recognised (a program replaced at the same path is the same program), and the command runs."""
    python = python_of_its_own(tmp_path / "venv")
    env = isolated_desktop_env(os.environ, desktop_home(home), REAL_HOMES)
    Path(env["HOME"]).mkdir(parents=True, exist_ok=True)
    connect_claude_desktop(env, home)
    env.update({HOME_ENV: str(home), "PYSTRAY_BACKEND": "dummy"})
    env.pop("DISPLAY", None)
    env.pop("VIRTUAL_ENV", None)
    with open(tmp_path / "tray.log", "ab") as out:
        tray = subprocess.Popen([str(python), "-m", "app", "tray", "--verbose"], env=env, stdout=out, stderr=out)
    try:
        wait_for_tray_as(python, home, tray)
        replace_in_place(python)
        assert os.readlink(f"/proc/{tray.pid}/exe").endswith(" (deleted)")
        server = subprocess.Popen(
            [str(python), "-m", "app", "serve"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            said = stdio_call(server, "execute_command", {"command": "echo ran-in-the-tray"})
        finally:
            server.stdin.close()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            server.stdout.close()
            server.stderr.close()
        assert "not Cowork Terminal" not in said, said
        assert "ran-in-the-tray" in said, said
    finally:
        tray.terminate()
        try:
            tray.wait(10)
        except subprocess.TimeoutExpired:
            tray.kill()
            tray.wait()


def wait_for_tray_as(python: Path, home: Path, tray: subprocess.Popen) -> None:
    """The tray answers its channel, asked by a process of the same program (this test's own Python
    is another program, which a tray's peer check tells apart)."""
    ask = (
        "import sys; from app.core.channel.client import current_tray_state as s; from app.core.paths import AppPaths;"
        " sys.exit(s(AppPaths.from_environment()) is None)"
    )
    env = {**os.environ, HOME_ENV: str(home)}
    env.pop("VIRTUAL_ENV", None)
    deadline = time.monotonic() + TRAY_START_S
    while time.monotonic() < deadline:
        assert tray.poll() is None, f"the tray exited with code {tray.returncode}"
        if subprocess.run([str(python), "-c", ask], env=env, timeout=TRAY_START_S).returncode == 0:
            return
        time.sleep(0.1)
    raise AssertionError(f"the tray did not answer within {TRAY_START_S:g} s")


def stdio_call(server: subprocess.Popen, tool: str, arguments: dict) -> str:
    """initialize, then one tools/call, over a server's stdio; the text the model reads."""

    def send(message: dict) -> None:
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()

    def answer(request_id: int) -> dict:
        deadline = time.monotonic() + FIRST_CALL_DEADLINE_S
        buffer = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([server.stdout], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(server.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") == request_id:
                    return message
        raise AssertionError(f"no answer to request {request_id}")

    client = {"name": "claude-ai", "version": "0.14"}
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}})  # fmt: skip
    answer(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
    result = answer(2).get("result") or {}
    return "".join(c.get("text", "") for c in result.get("content", []))


# -- the tray's windows started after its files were replaced -----------------------------------------

OLD_COMMIT = "a660850"  # 2026-12-04: a version a person may go back to
SHOWN_BY_THE_WINDOW = """
    import json as _json
    for _line in sys.stdin:
        _message = _json.loads(_line)
        if _message.get("op") == "show":
            from app.ui.windows.held_command import WaitingCommand as _Waiting
            shown = list(_Waiting.from_json(_message["hold"]).lines())
            with open({marker!r}, "w") as _out:
                _out.write(_json.dumps({{"sent": _message["hold"], "shown": shown}}))
            return 0
"""


def older_tree_recording_its_prompt(folder: Path, marker: Path) -> Path:
    """`app` as it was at OLD_COMMIT, its approval prompt made to write the lines it would show for
    the first held command it is sent (what its `WaitingCommand.lines()` gives) into `marker`, and
    exit (no display here)."""
    repo = Path(__file__).parents[1]
    try:
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", OLD_COMMIT, "app"], capture_output=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):  # no git, or a shallow clone without that commit
        pytest.skip(f"needs the repository's history ({OLD_COMMIT}); tests/test_window_versions.py has the rest")
    folder.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    prompt = folder / "app" / "ui" / "windows" / "approval_prompt.py"
    text = prompt.read_text()
    head = '    """Run the prompt for the tray that started it (held commands on stdin, answers on stdout)."""\n'
    assert head in text
    prompt.write_text(text.replace(head, head + SHOWN_BY_THE_WINDOW.format(marker=str(marker)), 1))
    return folder / "app"


def test_an_approval_prompt_of_the_version_on_disk_drops_what_only_a_person_may_allow(
    home: Path, tmp_path: Path
) -> None:
    """The person's tray runs this version from its install folder (here a copy of this checkout's
    `app`); a server is bound and has run a command. The person then goes back to an older version
    (a660850, 2026-12-04) without quitting the tray: its files are replaced in place. The model
    sends `echo x >> ~/.bashrc`: the tray (this version, in memory) holds it as a command that
    asks to run without the container's protection ("Changes a file Cowork Terminal protects; if
    you allow it, it runs without that protection", "Once allowed, it can change ~/.bashrc":
    `WaitingCommand.asks`) and starts its approval prompt, `python -m app approval-prompt`, which
    loads the files now on disk: the older window, which knows no `asks` and drops them
    (`WaitingCommand.from_json` of a660850). What went wrong: the window the person clicks Allow in
    shows only "Writes to ~/.bashrc"; nothing says it runs outside the protection, which one click
    then gives it. The tray starts every window (prompt, confirm, log, settings) from whatever
    version is on disk, and nothing on its pipe says which version either end is
    (`ui/tray/windows.py`, `ui/windows/link.py`). What should happen: a tray whose files were
    replaced does not start a window of another version (it tells the person to restart it), or the
    window and the tray check each other's version on the pipe."""
    marker = tmp_path / "shown.json"
    copy = tmp_path / "install"
    shutil.copytree(Path(__file__).parents[1] / "app", copy / "app", ignore=shutil.ignore_patterns("__pycache__"))
    python = python_of_its_own(tmp_path / "venv", copy)
    older = older_tree_recording_its_prompt(tmp_path / "older", marker)
    env = isolated_desktop_env(os.environ, desktop_home(home), REAL_HOMES)
    Path(env["HOME"]).mkdir(parents=True, exist_ok=True)
    connect_claude_desktop(env, home)
    env.update({HOME_ENV: str(home), "PYSTRAY_BACKEND": "dummy", "COWORK_TERMINAL_PATIENCE_S": "2"})
    env.pop("DISPLAY", None)
    env.pop("VIRTUAL_ENV", None)
    with open(tmp_path / "tray.log", "ab") as out:
        tray = subprocess.Popen([str(python), "-I", "-m", "app", "tray", "--verbose"], cwd=tmp_path, env=env,
                                stdout=out, stderr=out)  # fmt: skip
    server = None
    try:
        wait_for_tray_as(python, home, tray)
        server = subprocess.Popen(
            [str(python), "-I", "-m", "app", "serve"], cwd=tmp_path, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        talk = StdioTalk(server)
        talk.initialize()
        deadline = time.monotonic() + FIRST_CALL_DEADLINE_S
        while '"finished"' not in talk.call("execute_command", {"command": "true", "cwd": str(tmp_path)}):
            assert time.monotonic() < deadline, "the tray never ran the first command"
            time.sleep(0.2)
        shutil.rmtree(copy / "app")  # the older version's files, in place
        shutil.copytree(older, copy / "app")
        said = talk.call("execute_command", {"command": "echo x >> ~/.bashrc", "cwd": str(tmp_path)})
        assert '"waiting"' in said, said
        # What holds now: the tray opens no window from files that are not the ones it started from
        # (program_identity), and tells the person to restart it; the command waits (Deny in the menu).
        told = "notice: Cowork Terminal: Cowork Terminal's files were replaced while it was running"
        deadline = time.monotonic() + FIRST_CALL_DEADLINE_S
        while told not in (tmp_path / "tray.log").read_text(errors="replace") and not marker.exists():
            assert time.monotonic() < deadline, "the person was not told that the tray's files were replaced"
            time.sleep(0.1)
        time.sleep(1.0)
        if marker.exists():  # a window of the version on disk was started and shown the hold
            recorded = json.loads(marker.read_text())
            sent, shown = recorded["sent"], recorded["shown"]
            # The tray (this version) sent what only a person's Allow gives the command:
            assert any("without that protection" in ask for ask in sent.get("asks", [])), sent
            assert any("without that protection" in line for line in shown), f"the prompt shows {shown}"
        assert not marker.exists(), "the approval prompt of the version on disk was started"
        bashrc = Path(env["HOME"]) / ".bashrc"
        assert not bashrc.exists() or "x" not in bashrc.read_text(), "the held command ran"
    finally:
        if server is not None:
            server.stdin.close()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            server.stdout.close()
        tray.terminate()
        try:
            tray.wait(10)
        except subprocess.TimeoutExpired:
            tray.kill()
            tray.wait()


class StdioTalk:
    """A server spoken to over its stdio, one request at a time."""

    def __init__(self, server: subprocess.Popen) -> None:
        self.server = server
        self.next_id = 0
        self.buffer = b""

    def send(self, message: dict) -> None:
        self.server.stdin.write((json.dumps(message) + "\n").encode())
        self.server.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + FIRST_CALL_DEADLINE_S
        while time.monotonic() < deadline:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") == self.next_id:
                    return message
            ready, _, _ = select.select([self.server.stdout], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(self.server.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                break
            self.buffer += chunk
        raise AssertionError(f"no answer to {method}")

    def initialize(self) -> None:
        client = {"name": "claude-ai", "version": "0.14"}
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, arguments: dict) -> str:
        result = self.request("tools/call", {"name": tool, "arguments": arguments}).get("result") or {}
        return "".join(c.get("text", "") for c in result.get("content", []))


# -- uninstall while the tray runs ------------------------------------------------------------------


def test_uninstall_counts_the_tray_as_a_server_and_signals_its_pid_after_it_quit(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    """A tray runs and one `serve` is bound to it and has run a command (the tray opened a runner
    for it). The person runs `cowork-terminal uninstall` (here: its plan, `plan_uninstall`). What
    went wrong: the plan says "Stop 2 running servers (pid S, T) of this install", T being the
    tray's own pid: each runner has a `servers` row of its own with the tray's pid and a lock the
    tray holds (ARCHITECTURE: "Each runner has its own servers row (pid: the tray's)"), and
    `app_processes.live_servers` takes it for a server. `run_uninstall` then quits the tray first
    and afterwards SIGTERMs that pid, and SIGKILLs it 3 s later if it is still there: a tray still
    finishing its quit is killed (a run here saw the tray end by SIGTERM, code -15, after it had
    let go of its lock), a tray that did not quit within 10 s (the person is told "quit it from its
    menu") is SIGKILLed, and a process that took the freed pid would be. What should happen: the
    plan lists only the servers Claude started (not the tray's runners), and nothing signals the
    tray's pid but the tray's own quit."""
    from app.core.install.installation import this_install
    from app.core.install.uninstall import plan_uninstall

    with running_tray(home) as tray:
        env = {**os.environ, HOME_ENV: str(home), "COWORK_TERMINAL_PATIENCE_S": "5"}
        server = subprocess.Popen(
            [sys.executable, "-m", "app", "serve"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            talk = StdioTalk(server)
            talk.initialize()
            deadline = time.monotonic() + FIRST_CALL_DEADLINE_S
            while '"finished"' not in talk.call("execute_command", {"command": "true", "cwd": str(tmp_path)}):
                assert time.monotonic() < deadline, "the tray never ran the first command"
                time.sleep(0.2)
            plan = plan_uninstall(paths, this_install(), delete_data=False, home=tmp_path / "no-desktop")
            assert server.pid in plan.servers, plan.servers
            steps = plan.steps()
            assert tray.pid not in plan.servers, f"the tray's pid {tray.pid} is among the servers to stop: {steps}"
        finally:
            server.stdin.close()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            server.stdout.close()
