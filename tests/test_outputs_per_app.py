"""Each app's whole outputs in a folder of its own, the only one its commands see (output_files.py,
container.outputs_args); clearing the history removes the files of the rows it deletes.

Why: a red team (2026-12-05) ran `grep -r . <outputs>` from Claude Code and read what a Cowork job
had printed. The servers run in this process (tests/in_process_server.py), one per app."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
from mcp import Client

from app.core.execution import landlock
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from tests.in_process_server import serving
from tests.test_jobs import COWORK, call, named_here
from tests.test_spare_container import INIT_AGE, init_age, spare_waits, timed

pytestmark = pytest.mark.anyio
needs_bwrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="bwrap (Linux)"
)
# More output than the default budget lets through: its whole output is kept in a file.
LONG = "seq 1 200000; echo {marker}"


def marker_of(what: str) -> str:
    return f"{what.upper()}-PRIVATE-{os.getpid()}"


async def kept_output(client: Client, marker: str) -> Path:
    done = await call(client, "execute_command", {"command": LONG.format(marker=marker)})
    assert done["exitCode"] == 0 and done.get("outputFile"), done
    path = Path(done["outputFile"])
    assert marker in path.read_text(), "the whole output is kept"
    return path


@needs_bwrap
async def test_another_apps_commands_see_none_of_an_apps_kept_outputs_and_its_own_see_them(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = marker_of("cowork")
    outputs = paths.outputs
    async with named_here(home, COWORK, monkeypatch) as owner, named_here(home, "claude-code", monkeypatch) as stranger:
        path = await kept_output(owner, marker)
        for tool in ("execute_command", "execute_read_only_command"):
            for command in (f"grep -r {marker} {outputs}", f"tail -n 3 {outputs}/*.log {outputs}/*/*.log"):
                # From the outputs folder: the read-only tool's /tmp is its own, but for the folder it runs in.
                read = await call(stranger, tool, {"command": command, "cwd": str(outputs)})
                assert marker not in str(read), (tool, command, read)
            own = await call(owner, tool, {"command": f"grep -rl {marker} {outputs}", "cwd": str(outputs)})
            assert str(path) in own["stdout"], (tool, "an app's own commands read its outputs")
    assert path.parent.parent == outputs and path.parent != outputs, "in the app's own folder"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and stat.S_IMODE(outputs.stat().st_mode) == 0o700


@needs_bwrap
@pytest.mark.skipif(
    landlock.plan(sys.platform, landlock.kernel_abi(), landlock.find_perl()) != landlock.SCOPED,
    reason="spares are started with the Perl init, which needs Landlock scopes",
)
async def test_a_spare_started_for_one_app_is_not_used_for_another_but_is_for_the_same_app(
    home: Path, paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = marker_of("spare")
    async with named_here(home, COWORK, monkeypatch) as owner, named_here(home, "claude-code", monkeypatch) as stranger:
        await kept_output(owner, marker)  # its app's folder is made: the next container binds it back
        await call(owner, "execute_command", {"command": "true"})
        await spare_waits()
        again = await call(owner, "execute_command", {"command": INIT_AGE})
        assert init_age(again["stdout"]) >= 1.0, "the same app's next command ran in the spare"
        await spare_waits()
        other, took = await timed(
            call(stranger, "execute_command", {"command": f"{INIT_AGE}; grep -r {marker} {paths.outputs}"})
        )
        assert marker not in other["stdout"] and marker not in other.get("stderr", "")
        fresh = init_age(other["stdout"].split("\n")[0]) <= took + 0.03
        assert fresh, "another app's command got a container of its own"


async def test_clearing_the_history_removes_the_output_files_of_the_rows_it_deletes(
    home: Path, paths: AppPaths
) -> None:
    async with serving(home) as client:
        path = await kept_output(client, marker_of("cleared"))
    with Journal.open(paths) as journal:
        assert journal.clear_history() >= 1
    assert not path.exists(), "its whole output went with its row"


@needs_bwrap
async def test_the_first_kept_output_does_not_end_the_session_shell(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's folder of whole outputs is made with its first container, not by its first kept file:
    a container that changed then would have started the session's shell anew, its variables gone."""
    async with named_here(home, COWORK, monkeypatch) as client:
        first = await call(client, "terminal_run", {"command": "KEPT=still-here; " + LONG.format(marker="x")})
        assert first.get("outputFile"), first
        again = await call(client, "terminal_run", {"command": "echo $KEPT"})
    assert again["output"] == "still-here\n" and "restart" not in str(again).lower(), again
