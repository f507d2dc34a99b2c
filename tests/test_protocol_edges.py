"""The stdio transport's answers to what the SDK's reader refuses or would mis-handle (a red team,
2026-12-06, protocol): requests that are not valid JSON-RPC, lines nested too deeply, lines that
never end, bytes that are not UTF-8, and ids reused while their request is in flight. Pure functions
and the transport's classes in this process, on memory streams and a pipe the test holds."""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from app.server import stdio_transport
from app.server.argument_gate import refusal_of
from app.server.stdio_transport import (
    CUT_MARK,
    AnsweringWriter,
    CappedLines,
    InFlight,
    LoopLines,
    RepairingReader,
    invalid_answers,
    repair_line,
)


def rejected(line: str) -> ValidationError:
    """What the SDK's stdio reader hands on for a line it refuses."""
    with pytest.raises(ValidationError) as caught:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    return caught.value


def errors_of(answers: list[SessionMessage]) -> list[tuple[Any, int, str]]:
    found = []
    for answer in answers:
        assert isinstance(answer.message, types.JSONRPCError)
        found.append((answer.message.id, answer.message.error.code, answer.message.error.message))
    return found


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":["a"]}', "params must be an object"),
        ('{"id":"x","method":"tools/list"}', '"jsonrpc": "2.0"'),
        ('{"jsonrpc":"1.0","id":9,"method":"tools/list"}', '"jsonrpc": "2.0"'),
        ('{"jsonrpc":"2.0","id":9}', "no method"),
        ('{"jsonrpc":"2.0","id":9,"method":"x","params":{"a":' + '{"a":' * 300 + "1" + "}" * 301 + "}", "too deeply"),
        ('{"jsonrpc":"2.0","id":9,"method":"x","params":' + "[" * 5000 + "]" * 5000 + "}", "too deeply"),
    ],
    ids=["params-list", "no-jsonrpc", "jsonrpc-1.0", "no-method", "deep", "past-pythons-stack"],
)
def test_an_invalid_request_whose_id_can_be_read_is_answered_invalid_request(line: str, words: str) -> None:
    ((request_id, code, message),) = errors_of(invalid_answers(rejected(line)))
    assert request_id == json.loads(line[: line.index(',"method"')] + "}" if "method" in line else line)["id"]
    assert code == types.INVALID_REQUEST and words in message


def test_a_line_that_is_not_json_is_answered_a_parse_error_when_its_id_leads() -> None:
    assert errors_of(invalid_answers(rejected('{"jsonrpc":"2.0","id":3,"method":'))) == [
        (3, types.PARSE_ERROR, "Parse error: the line is not JSON. Send one JSON-RPC message a line, as JSON text.")
    ]
    nested_id = '{"jsonrpc":"2.0","params":{"id":3},"method":'
    assert invalid_answers(rejected(nested_id)) == [], "an id that does not lead is not guessed at"


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","method":"tools/call","params":[1]}',  # a notification: never answered
        '{"jsonrpc":"2.0","id":true,"method":"x","params":[1]}',  # true is no id (it would alias 1)
        '{"jsonrpc":"2.0","id":4,"result":[]}',  # a malformed answer: answering it could loop
        "[]",
        "garbage",
    ],
)
def test_a_line_whose_id_cannot_be_read_gets_no_answer(line: str) -> None:
    assert invalid_answers(rejected(line)) == []


def test_each_request_of_a_batch_is_answered_that_batches_are_not_supported() -> None:
    line = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},'
    line += '{"jsonrpc":"2.0","id":"b","method":"x"}]'
    assert [(request_id, code) for request_id, code, _ in errors_of(invalid_answers(rejected(line)))] == [
        (1, types.INVALID_REQUEST),
        ("b", types.INVALID_REQUEST),
    ]


def test_bytes_that_are_not_utf8_are_named_as_such_and_the_call_is_refused() -> None:
    raw = b'{"jsonrpc":"2.0","id":4,"method":"tools/call",'
    raw += b'"params":{"name":"execute_command","arguments":{"command":"A\xff\xfeB"}}}'
    repaired = repair_line(raw.decode("utf-8", errors="surrogateescape"))
    assert repaired is not None
    params = repaired.message.model_dump(by_alias=True, exclude_unset=True)["params"]
    assert params["arguments"]["command"] == "A\ufffd\ufffdB"
    reason = refusal_of("execute_command", params["arguments"], params["_meta"])
    assert reason is not None and reason.startswith("`command` contains bytes that are not UTF-8")
    escaped = repair_line(raw.replace(b"\xff\xfe", b"\\udcff").decode())  # an escape is still named a surrogate
    assert escaped is not None
    meta = escaped.message.model_dump(by_alias=True, exclude_unset=True)["params"]["_meta"]
    assert "lone UTF-16 surrogate" in (refusal_of("execute_command", {"command": "A"}, meta) or "")


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    try:
        yield read_end, write_end
    finally:
        for fd in (read_end, write_end):
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.mark.anyio
async def test_a_line_past_the_limit_is_dropped_as_it_comes_and_its_id_answered(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stdio_transport, "LINE_LIMIT", 1 << 16)
    read_end, write_end = pipe
    lines = LoopLines(read_end)
    head = b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"x","arguments":{"a":"'
    kept: list[str] = []

    async def read() -> None:
        kept.extend([await lines.__anext__(), await lines.__anext__()])

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        os.write(write_end, head)
        for _ in range(40):  # 40 times the limit, written as the reader reads
            await anyio.to_thread.run_sync(os.write, write_end, b"x" * (1 << 16))
            assert len(lines._buffer) <= (1 << 16) + stdio_transport.READ_BYTES, "the buffer must stay bounded"
        await anyio.to_thread.run_sync(os.write, write_end, b'"}}}\n{"jsonrpc":"2.0","id":13,"method":"ping"}\n')
    assert kept[0].startswith(CUT_MARK + head.decode()) and len(kept[0]) < 5000
    assert json.loads(kept[1])["id"] == 13, "the next line is read whole"
    ((request_id, code, message),) = errors_of(invalid_answers(rejected(kept[0])))
    assert (request_id, code) == (12, types.INVALID_REQUEST) and "dropped" in message


@pytest.mark.anyio
async def test_a_reused_id_is_refused_while_its_request_runs_and_taken_again_once_answered() -> None:
    send, receive = anyio.create_memory_object_stream[Any](16)
    out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](16)
    in_flight = InFlight()
    reader = RepairingReader(receive, answer=out_send.send, in_flight=in_flight)
    writer = AnsweringWriter(out_send, in_flight)

    def request(request_id: int | str) -> SessionMessage:
        return SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/list"))

    def cancel(request_id: int | str) -> SessionMessage:
        params = {"requestId": request_id}
        return SessionMessage(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=params))

    for item in (request(7), request("7"), request(7), cancel("7"), cancel(7), request(8)):
        send.send_nowait(item)
    assert (await reader.receive()).message.id == 7
    cancelled = await reader.receive()  # the refusals are answered, and a cancel of "7" is not the cancel of 7
    assert cancelled.message.params == {"requestId": 7}
    assert (await reader.receive()).message.id == 8
    refusals = [out_receive.receive_nowait() for _ in range(2)]
    assert [(e[0], e[1]) for e in errors_of(refusals)] == [("7", types.INVALID_REQUEST), (7, types.INVALID_REQUEST)]
    assert "is taken by request 7, which is still running" in errors_of(refusals)[0][2]
    await writer.send(SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=7, result={})))
    send.send_nowait(request("7"))
    assert (await reader.receive()).message.id == "7", "an answered id is free again"


@pytest.mark.anyio
async def test_a_cancelled_requests_id_is_free_again() -> None:
    """The SDK never answers a cancelled request, so its id left the ids in flight only with an answer
    that never came: a later request with it was refused as "still running" (a review, 2026-12-06)."""
    send, receive = anyio.create_memory_object_stream[Any](16)
    out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](16)
    reader = RepairingReader(receive, answer=out_send.send, in_flight=InFlight())
    cancel = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params={"requestId": 100})
    for item in (
        types.JSONRPCRequest(jsonrpc="2.0", id=100, method="tools/list"),
        cancel,
        types.JSONRPCRequest(jsonrpc="2.0", id=100, method="ping"),
    ):
        send.send_nowait(SessionMessage(item))
    assert (await reader.receive()).message.id == 100
    assert (await reader.receive()).message.method == "notifications/cancelled"
    again = await reader.receive()
    assert (again.message.id, again.message.method) == (100, "ping")
    with pytest.raises(anyio.WouldBlock):
        out_receive.receive_nowait()  # nothing refused


def test_the_sdk_transports_stdin_is_read_as_the_loops_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the SDK's transport serves (Windows, a file, a terminal): the same bound and decoding."""
    monkeypatch.setattr(stdio_transport, "LINE_LIMIT", 1000)
    lines = CappedLines(io.BytesIO(b'{"id":1,' + b"x" * 5000 + b"\nA\xff\n" + b"y" * 999 + b"\nend"))
    cut = lines.readline()
    assert cut.startswith(CUT_MARK + '{"id":1,x') and cut.endswith("\n") and len(cut) < 1100
    assert lines.readline() == "A\udcff\n", "bytes that are not UTF-8 reach repair_line as surrogates"
    assert lines.readline() == "y" * 999 + "\n"
    assert [lines.readline(), lines.readline()] == ["end", ""]
