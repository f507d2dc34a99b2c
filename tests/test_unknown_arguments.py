"""A misspelled or unknown argument is refused, naming it and the tool's arguments as declared
(the server in this process, tests/in_process_server.py, called by the SDK's client): `cwdir` must
never run the command in the home folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from tests.in_process_server import serving
from tests.stdio_client import run

pytestmark = pytest.mark.anyio


async def test_a_misspelled_cwd_is_refused_naming_it_and_the_command_does_not_run(
    home: Path, paths: AppPaths, tmp_path: Path
) -> None:
    async with serving(home) as client:
        refused = await run(client, {"command": "touch made-here", "cwdir": str(tmp_path)})
    error = refused["error"]
    assert "`cwdir` is not an argument of execute_command, so nothing was run. Did you mean `cwd`?" in error, error
    assert "Its arguments are: `command`, `cwd`" in error
    assert not (home / "made-here").exists() and not (tmp_path / "made-here").exists()
    with Journal.open(paths) as journal:
        [row] = journal.recent_commands()
    assert row.status is Status.REFUSED and row.command == "touch made-here"


async def test_every_tool_names_exactly_the_arguments_it_declares(home: Path) -> None:
    async with serving(home) as client:
        tools = (await client.list_tools()).tools
        assert len(tools) >= 2
        for tool in tools:
            declared = list(tool.input_schema.get("properties") or {})
            result = await client.call_tool(tool.name, {"no_such_argument": 1})
            text = result.content[0].text
            assert result.is_error, (tool.name, text)
            assert f"`no_such_argument` is not an argument of {tool.name}" in text, text
            listed = text.split("Its arguments are: ")[1].rstrip(".")
            assert listed == (", ".join(f"`{name}`" for name in declared) or "none"), (tool.name, text)
