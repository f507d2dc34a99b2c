"""Bad arguments, as the model reads them. Over raw lines to one real `serve` process shared by the
module: what the SDK's client cannot send (lone surrogates), NULs, folders that cannot be examined,
a 5 MB command on one line. Over the SDK's client to the server in this process
(tests/in_process_server.py): wrong types for every tool, and a server bound to the tray's hub."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.authority.hub import Hub
from app.core.journal.store import REFUSED_TEXT_KEEP_CHARS, Journal, Status
from app.core.paths import AppPaths
from tests.in_process_server import serving
from tests.raw_stdio import RawServer

LONE = "\\ud800"  # as the raw JSON text carries it: an unpaired high surrogate escape


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawServer, Path]]:
    """One headless server and its home for the refusals below, which depend on nothing before them
    (a serve costs about a second of CPU to start). Each checks the rows (and bytes) its own call added."""
    home = tmp_path_factory.mktemp("arguments") / "cowork-home"
    raw = RawServer(home, "--headless")
    raw.initialize()
    yield raw, home
    raw.close()


SHARED = pytest.mark.xdist_group("arguments-shared-serve")


def newest_rows(home: Path, before: int) -> list:
    """The rows added since the journal held `before` (newest first)."""
    now = rows(home)
    return now[: len(now) - before]


def rows(home: Path) -> list:
    with Journal(AppPaths(home, home / "logs")) as journal:
        return journal.recent_commands(limit=100)


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("execute_command", '{"command": "echo @"}', "`command`"),
        ("execute_command", '{"command": "echo hi", "cwd": "/tmp/@"}', "`cwd`"),
        ("execute_command", '{"command": "echo hi", "env": {"K@": "v"}}', "`env` variable name"),
        ("execute_command", '{"command": "echo hi", "env": {"K": "v@"}}', "`env` value for K"),
        ("terminal_run", '{"command": "echo @"}', "`command`"),
    ],
)
@SHARED
def test_a_lone_surrogate_in_any_string_argument_is_answered_naming_it_and_journaled_as_refused(
    shared: tuple[RawServer, Path], tool: str, arguments: str, named: str
) -> None:
    server, home = shared
    before = len(rows(home))
    answer = server.call(tool, arguments.replace("@", LONE))
    assert answer is not None, "the call got no answer at all"
    assert answer.startswith("ERROR: ") and named in answer and "lone UTF-16 surrogate" in answer
    [row] = newest_rows(home, before)
    assert row.status is Status.REFUSED and row.tool == tool
    assert json.loads(server.call("execute_command", '{"command": "echo alive"}'))["stdout"] == "alive\n"


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ('{"command": "echo a\\u0000b"}', "`command`"),
        ('{"command": "echo hi", "cwd": "/tmp\\u0000x"}', "`cwd`"),
        ('{"command": "echo hi", "env": {"K": "a\\u0000"}}', "`env` value for K"),
    ],
)
@SHARED
def test_a_nul_in_any_string_argument_is_refused_naming_it(
    shared: tuple[RawServer, Path], arguments: str, named: str
) -> None:
    server, home = shared
    before = len(rows(home))
    answer = server.call("execute_command", arguments)
    assert answer is not None and answer.startswith("ERROR: ")
    assert named in answer and "NUL" in answer
    [row] = newest_rows(home, before)
    assert row.status is Status.REFUSED


WRONG_TYPES = [
    ("execute_command", {"command": 5}, "`command` must be a string: the bash command to run (got 5)"),
    ("execute_command", {"command": True}, "`command` must be a string: the bash command to run (got true)"),
    ("execute_command", {}, "`command` is empty: give the bash command to run"),
    (
        "execute_command",
        {"command": "true", "timeout": True},
        "`timeout` must be a number of milliseconds between 1 and 600000 (got true)",
    ),
    (
        "execute_command",
        {"command": "true", "timeout": "5000"},
        '`timeout` must be a number of milliseconds between 1 and 600000 (got "5000")',
    ),
    ("execute_command", {"command": "true", "timeout": [1]}, "(got a list)"),
    ("execute_command", {"command": "true", "cwd": 5}, "`cwd` must be a string: the absolute path of an existing"),
    ("execute_command", {"command": "true", "env": "A=1"}, "`env` must be an object mapping variable names"),
    ("execute_command", {"command": "true", "env": {"A": False}}, "`env` value for A must be a string (got a boolean)"),
    ("terminal_run", {"command": ["ls"]}, "`command` must be a string: the bash command to run (got a list)"),
    ("terminal_run", {"command": "ls", "timeout": False}, "`timeout` must be a number of milliseconds"),
    ("terminal_send_keys", {"keys": 5}, "`keys` must be a string: the text to type (got 5)"),
    ("terminal_send_keys", {}, "`keys` is missing: give the text to type"),
    ("terminal_confirm", {"confirmation_id": 7}, "`confirmation_id` must be a string"),
    ("terminal_confirm", {}, "`confirmation_id` is missing: give the id from the held command's message"),
    ("terminal_cancel", {"confirmation_id": None}, "`confirmation_id` is missing"),
    ("terminal_read_scrollback", {"lines": "10"}, '`lines` must be a whole number from 1 to 500 (got "10")'),
    ("terminal_read_scrollback", {"lines": True}, "`lines` must be a whole number from 1 to 500 (got true)"),
    ("terminal_read_scrollback", {"lines": 2.5}, "(got 2.5)"),
    ("terminal_read_scrollback", {"lines": 0}, "(got 0)"),
]


@pytest.mark.anyio
async def test_an_env_value_of_the_wrong_kind_is_never_written_in_the_refusal_nor_the_journal(home: Path) -> None:
    """A red team, 2026-12-05: `{"API_TOKEN": ["sk-live-123456"]}` was refused with the value quoted
    back, and the refused row's reason kept it in the journal (shown to other servers and the log)."""
    async with serving(home) as client:
        for value in (["sk-live-123456"], 987654):
            result = await client.call_tool("execute_command", {"command": "echo hi", "env": {"API_TOKEN": value}})
            assert result.is_error and "must be a string" in result.content[0].text, result
            assert "sk-live" not in result.content[0].text and "987654" not in result.content[0].text
    journal = b"".join(path.read_bytes() for path in home.glob("journal.sqlite3*"))
    assert b"sk-live" not in journal and b"987654" not in journal


@pytest.mark.anyio
async def test_wrong_or_missing_arguments_of_every_tool_are_answered_in_plain_words(home: Path) -> None:
    async with serving(home) as client:
        for tool, arguments, expected in WRONG_TYPES:
            result = await client.call_tool(tool, arguments)
            text = result.content[0].text
            assert result.is_error, (tool, arguments, text)
            assert expected in text, (tool, arguments, text)
            for leak in ("pydantic", "http", "validation error", "Input should"):
                assert leak not in text, (tool, arguments, text)
        echoed = await client.call_tool("execute_command", {"command": "echo still here", "timeout": 5000.0})
        assert json.loads(echoed.content[0].text)["stdout"] == "still here\n"
    refused = [r for r in rows(home) if r.status is Status.REFUSED]
    journaled_tools = {"execute_command", "terminal_run", "terminal_send_keys"}
    assert len(refused) == sum(1 for tool, _, _ in WRONG_TYPES if tool in journaled_tools)


@SHARED
def test_a_cwd_that_cannot_be_examined_gets_its_folder_and_reason(
    shared: tuple[RawServer, Path], tmp_path: Path
) -> None:
    server, _ = shared
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    long_name = "/" + "a" * 5000
    cases = [(str(loop), "Too many levels of symbolic links"), (long_name, "File name too long")]
    try:
        os.stat("/proc/1/cwd")
    except PermissionError:  # a process of another user, or of a container's init
        cases.append(("/proc/1/cwd", "Permission denied"))
    for cwd, reason in cases:
        answer = server.call("execute_command", json.dumps({"command": "pwd", "cwd": cwd}))
        assert answer is not None and answer.startswith("ERROR: "), answer
        assert f"`cwd` cannot be examined: {cwd[:200]}" in answer and reason in answer, answer
        assert answer.rstrip().endswith("Give a folder this user can open."), answer


@SHARED
def test_a_refused_five_megabyte_command_keeps_a_few_kilobytes_in_the_journal(shared: tuple[RawServer, Path]) -> None:
    server, home = shared
    journal_files = [home / "journal.sqlite3", home / "journal.sqlite3-wal"]
    before_bytes = sum(f.stat().st_size for f in journal_files if f.exists())
    before = len(rows(home))
    command = "echo " + "x" * 5_000_000
    answer = server.call("execute_command", json.dumps({"command": command}))
    assert answer is not None and "the limit is 102,400 bytes" in answer
    [row] = newest_rows(home, before)
    assert row.status is Status.REFUSED
    assert len(row.command) < REFUSED_TEXT_KEEP_CHARS + 200
    assert row.command.startswith("echo xxx") and "of 5,000,005 bytes kept" in row.command
    grown = sum(f.stat().st_size for f in journal_files if f.exists()) - before_bytes
    assert grown < 256 * 1024, f"the journal grew by {grown:,} bytes"


@pytest.mark.anyio
async def test_a_refused_five_megabyte_command_reaches_the_trays_journal_bounded_and_the_server_keeps_its_tray(
    home: Path, hub: Hub
) -> None:
    """Bound to the tray's hub (in this process, as the tray's runner of a server's calls is): the
    refused row crosses the channel, with its size limit, and the link lives on."""
    async with serving(home, bound=True) as client:
        refused_call = await client.call_tool("execute_command", {"command": "echo " + "y" * 5_000_000})
        answer = refused_call.content[0].text
        assert refused_call.is_error and "the limit is 102,400 bytes" in answer
        after = await client.call_tool("execute_command", {"command": "echo still bound"})
        assert not after.is_error and json.loads(after.content[0].text)["stdout"] == "still bound\n"
        assert [peer.role for peer in hub.peers] == ["server"], "the tray still has its server"
    refused = [r for r in rows(home) if r.status is Status.REFUSED]
    assert [len(r.command) < REFUSED_TEXT_KEEP_CHARS + 200 for r in refused] == [True]
    assert "of 5,000,005 bytes kept" in refused[0].command
    assert rows(home)[0].command == "echo still bound" and rows(home)[0].status is Status.FINISHED


@pytest.mark.parametrize("depth", [600, 1000, 5000])
def test_a_lone_surrogate_in_a_line_nested_past_pythons_stack_neither_wedges_nor_ends_the_server(
    home: Path, depth: int
) -> None:
    """A red team, 2026-12-05: repairing such a line raised RecursionError, uncaught: at 600 arrays
    deep the server never answered again, at 1,000 it exited."""
    server = RawServer(home, "--headless")
    try:
        server.initialize()
        nested = "[" * depth + "]" * depth
        server.send_call("execute_command", f'{{"command": "echo {LONE}", "x": {nested}}}')
        answer = server.call("execute_command", '{"command": "echo alive"}')
        assert answer is not None and json.loads(answer)["stdout"] == "alive\n", answer
        assert server.wait(0.1) is None, "the server lives on"
    finally:
        server.close()
