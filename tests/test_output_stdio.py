"""Long output and long commands as Claude sees them: the SDK's client and the server in this process
(tests/in_process_server.py), as `serve --headless` opens it; progress notifications come over its
memory streams as over stdio. The output budget chosen with the CLI is set by a real
`cowork-terminal output-budget` process."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import ProgressNotification

from app.core.execution.output import BUDGET_ENV, DEFAULT_BUDGET_CHARS
from app.core.execution.output_decoding import json_length
from tests.in_process_server import serving
from tests.stdio_client import run, server_params

pytestmark = pytest.mark.anyio


SEQ_COMMAND = "seq 1 700000"
SLOW_COMMAND = "for i in 1 2 3 4 5 6; do echo step $i; sleep 0.5; done"  # about 3 s, a line every half second


def seq_bytes() -> bytes:
    return subprocess.run(["seq", "1", "700000"], capture_output=True, check=True).stdout


async def call(client: Client, tool: str, arguments: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments, **kwargs)
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert data == result.structured_content
    return data


async def test_seq_700000_comes_back_under_the_budget_with_its_first_and_last_lines(home: Path) -> None:
    async with serving(home) as client:
        raw = await client.call_tool("execute_command", {"command": SEQ_COMMAND})
    result = json.loads(raw.content[0].text)
    assert len(result["stdout"]) + len(result["stderr"]) <= DEFAULT_BUDGET_CHARS
    assert result["stdout"].startswith("1\n2\n3\n") and result["stdout"].endswith("699999\n700000\n")
    assert "left out here; the whole output is in outputFile" in result["stdout"]
    assert len(raw.content[0].text) < DEFAULT_BUDGET_CHARS * 1.2, "the text copy is compact: not twice the output"


async def test_output_file_holds_it_all_privately_and_tail_grep_sed_on_it_run_without_approval(home: Path) -> None:
    # Headless, in the default approval mode: with no tray to ask, a command that needed approval
    # would be refused; so these run only because reading the output file is not held.
    async with serving(home) as client:
        result = await run(client, {"command": SEQ_COMMAND})
        output_file = Path(result["outputFile"])
        tail = await run(client, {"command": f"tail -n 2 {output_file}"})
        grep = await run(client, {"command": f"grep -n '^350000$' '{output_file}'"})
        lines = await run(client, {"command": f"sed -n 5000,5002p {output_file}"})
        guarded = await run(client, {"command": f"tail -n 2 {home}/journal.sqlite3"})
    assert output_file.is_absolute() and output_file.read_bytes() == seq_bytes()
    assert stat.S_IMODE(output_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(output_file.parent.stat().st_mode) == 0o700
    assert not output_file.is_relative_to(home), "outside the app's own (guarded) folders"
    assert tail == {**tail, "stdout": "699999\n700000\n", "exitCode": 0, "outputFile": None}
    assert grep["stdout"] == "350000:350000\n"
    assert lines["stdout"] == "5000\n5001\n5002\n"
    assert "error" in guarded and "approv" in guarded["error"], "the app's own folder is still guarded"


async def test_a_short_output_names_no_file_and_leaves_none_behind(home: Path) -> None:
    async with serving(home) as client:
        result = await run(client, {"command": "seq 1 1000; echo warning >&2"})
    assert result["outputFile"] is None
    assert result["stdout"].endswith("999\n1000\n") and result["stderr"] == "warning\n"
    outputs = Path(f"{home}-outputs")
    assert not [path for path in outputs.rglob("*") if not path.is_dir()], "no file (the app's folder may be there)"


async def test_stdout_and_stderr_share_the_budget_fairly(home: Path) -> None:
    command = "seq 1 200000; seq 1 200000 | sed 's/^/E/' >&2; echo short"
    async with serving(home) as client:
        both = await run(client, {"command": command})
        one = await run(client, {"command": "seq 1 200000; echo only-this >&2"})
    assert abs(len(both["stdout"]) - len(both["stderr"])) < 1_000
    assert len(both["stdout"]) + len(both["stderr"]) <= DEFAULT_BUDGET_CHARS
    assert both["stderr"].startswith("E1\n") and both["stdout"].endswith("200000\nshort\n")
    # The budget is counted in the JSON text the model reads, where each line end takes two characters.
    assert one["stderr"] == "only-this\n" and json_length(one["stdout"]) > DEFAULT_BUDGET_CHARS - 200
    text = Path(both["outputFile"]).read_text()
    assert text.count("\n") == 400_001 and "E200000\n" in text and "short\n" in text


async def test_the_budget_setting_from_the_environment_reaches_the_result_and_the_description(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BUDGET_ENV, "5000")  # as Claude's configuration of the server sets it
    async with serving(home) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await run(client, {"command": SEQ_COMMAND})
    assert "5,000 characters" in tools["execute_command"].description
    assert "5,000 characters" in tools["terminal_run"].description and "outputFile" in tools["terminal_run"].description
    assert len(result["stdout"]) <= 5_000 and result["stdout"].endswith("700000\n")


async def test_the_budget_set_with_the_cli_applies_to_the_next_command(home: Path, cli_env: dict[str, str]) -> None:
    argv = [server_params(home).command, "-m", "app", "output-budget", "4000"]
    said = subprocess.run(argv, env=cli_env, capture_output=True, text=True, check=True).stdout
    assert "4,000 characters" in said
    async with serving(home) as client:
        result = await run(client, {"command": SEQ_COMMAND})
    assert len(result["stdout"]) <= 4_000
    refused = subprocess.run([*argv[:-1], "12"], env=cli_env, capture_output=True, text=True)
    assert refused.returncode == 2 and "from 2,000" in refused.stderr


async def test_a_session_command_with_long_output_comes_back_under_the_budget_with_its_file(home: Path) -> None:
    async with serving(home) as client:
        result = await call(client, "terminal_run", {"command": SEQ_COMMAND})
        after = await call(client, "terminal_run", {"command": "echo still here"})
    assert len(result["output"]) <= DEFAULT_BUDGET_CHARS
    assert result["output"].startswith("1\n2\n") and result["output"].endswith("699999\n700000\n")
    assert Path(result["outputFile"]).read_bytes() == seq_bytes()
    assert after["output"] == "still here\n" and after["outputFile"] is None


@pytest.mark.parametrize("tool", ["execute_command", "terminal_run"])
async def test_a_3_s_command_called_with_a_progress_token_reports_its_newest_lines(home: Path, tool: str) -> None:
    reports: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, message))

    async with serving(home) as client:
        await call(client, tool, {"command": SLOW_COMMAND}, progress_callback=on_progress)
    messages = [m for _, m in reports]
    assert len(reports) >= 3, reports
    assert all(m and m.startswith("step ") for m in messages)
    assert len(set(messages)) >= 3, "each report carries the newest line"
    progress = [p for p, _ in reports]  # the seconds since the call began
    assert all(later - earlier >= 0.45 for earlier, later in pairwise(progress)), "only grows, at most two a second"


async def test_progress_messages_write_out_terminal_escapes_and_invisible_characters(home: Path) -> None:
    """A client shows the newest line in its own terminal: an OSC 52 escape there sets the clipboard
    (a red team, 2026-12-05, found them passed on raw, while results show them written out)."""
    reports: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(message)

    command = r"printf 'hello\033]52;c;ZXZpbA==\a\033[2J \342\200\256end\n'; sleep 2"
    async with serving(home) as client:
        await call(client, "execute_command", {"command": command}, progress_callback=on_progress)
    said = [m for m in reports if m]
    assert said, reports
    assert all("\x1b" not in m and "\x07" not in m and "\u202e" not in m for m in said), said
    assert any(m.startswith("hello\u241b]52;c;ZXZpbA==") for m in said), said


async def test_a_client_that_sends_no_progress_token_gets_no_progress_notifications(home: Path) -> None:
    seen: list[object] = []

    async def on_message(message: object) -> None:
        seen.append(message)

    async with serving(home, message_handler=on_message) as client, anyio.create_task_group() as group:
        group.start_soon(call, client, "execute_command", {"command": SLOW_COMMAND})
        group.start_soon(call, client, "terminal_run", {"command": SLOW_COMMAND})
    assert not [m for m in seen if isinstance(m, ProgressNotification)]


async def test_the_message_handler_would_see_progress_notifications(home: Path) -> None:
    """The check above can fail: the same handler sees them when a token is sent."""
    seen: list[object] = []

    async def on_message(message: object) -> None:
        seen.append(message)

    async def ignore(progress: float, total: float | None, message: str | None) -> None:
        pass

    async with serving(home, message_handler=on_message) as client:
        await call(client, "execute_command", {"command": SLOW_COMMAND}, progress_callback=ignore)
    assert [m for m in seen if isinstance(m, ProgressNotification)]


async def test_a_starting_server_removes_whole_outputs_past_their_retention(home: Path) -> None:
    outputs = Path(f"{home}-outputs")
    outputs.mkdir(mode=0o700)
    old, recent = outputs / "20260101-000000-cmd1-aaaaaa.log", outputs / "20261129-000000-cmd2-bbbbbb.log"
    for path, age_days in ((old, 8), (recent, 1)):
        path.write_text("output\n")
        then = time.time() - age_days * 86_400
        os.utime(path, (then, then))
    async with serving(home) as client:
        await run(client, {"command": "true"})
        with anyio.fail_after(20):
            while old.exists():
                await anyio.sleep(0.1)
    assert recent.exists()
