"""Results and answers too big for one frame of the channel (core/channel/wire.py): what the model
reads instead, and the measure. Light, without anyio: the connection's code imports it at the tray's
start (a red team, 2026-12-05: a result over 1 MiB closed the link, and the model was told that the app
had gone away and its commands were stopped, while both went on)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from app.core.channel.call_messages import CallResult
from app.core.channel.wire import MAX_FRAME_BYTES
from app.core.messages import CALL_RESULT_TOO_BIG, TOO_BIG_ASK, TOO_BIG_ASK_ANY, TOO_BIG_JOB

log = logging.getLogger(__name__)

# Bytes a character may take in a frame (a control's \u0000): a result whose text and keys add up to
# less than the frame's limit over this cannot exceed it, and is not measured.
FRAME_BYTES_PER_CHAR = 6


def frame_size(message: Any) -> int:
    """The bytes `message` takes on the wire (as core/channel/wire.encode writes it)."""
    data = json.dumps(message.to_wire(), separators=(",", ":"), ensure_ascii=False)
    return len(data.encode("utf-8", "surrogatepass"))


def _chars_in(value: Any) -> int:
    """An upper bound of the characters of a JSON value's strings and numbers, plus one a value."""
    if isinstance(value, str):
        return len(value) + 1
    if isinstance(value, Mapping):
        return sum(_chars_in(key) + _chars_in(item) for key, item in value.items()) + 1
    if isinstance(value, (list, tuple)):
        return sum(_chars_in(item) for item in value) + 1
    return 24  # a number, true, false, null


def too_big_result(tool: str | None, size: int, result: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The error result the model reads instead of one that did not fit a frame: how big it was,
    that nothing was stopped (its job, if it names one), and what to ask for instead."""
    fields = result.get("structuredContent") if result is not None else None
    job = ""
    if isinstance(fields, Mapping) and isinstance(fields.get("jobId"), int) and isinstance(fields.get("status"), str):
        job = TOO_BIG_JOB.format(job=fields["jobId"], status=fields["status"][:40])
    ask = TOO_BIG_ASK.get(tool or "", TOO_BIG_ASK_ANY)
    text = CALL_RESULT_TOO_BIG.format(size=size, job=job, ask=ask, limit=MAX_FRAME_BYTES >> 20)
    said = f"Error executing tool {tool}: {text}" if tool else text[:1].upper() + text[1:]
    return {"content": [{"type": "text", "text": said}], "isError": True}


def fitting(tool: str, call_id: str, result: Mapping[str, Any]) -> Mapping[str, Any]:
    """`result`, or the error result saying it was too big to send (measured only when it may be)."""
    if _chars_in(result) * FRAME_BYTES_PER_CHAR < MAX_FRAME_BYTES - 1000:
        return result
    size = frame_size(CallResult(call_id, result))
    if size <= MAX_FRAME_BYTES:
        return result
    log.warning("the result of %s was %d bytes, over the frame's limit: the model is told", tool, size)
    return too_big_result(tool, size, result)
