"""A real `serve` process spoken to line by line, for what the SDK's client cannot send or do:
lone surrogate escapes, a bare initialize followed by a signal (Claude Code's `claude mcp list`)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from app.core.paths import HOME_ENV

ANSWER_DEADLINE_S = 30.0  # a call answered later than this was not answered (the bug was: never)
CLOSE_WAIT_S = 10.0  # a server leaves in well under a second once its stdin ends


class RawServer:
    """`output`: the server's stdout goes to this file (not a pipe) and is read back from it."""

    def __init__(self, home: Path, *args: str, env: dict[str, str] | None = None, output: Path | None = None) -> None:
        child_env = {**os.environ, HOME_ENV: str(home), **(env or {})}
        with open(output or os.devnull, "wb") as written:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", *args],
                stdin=subprocess.PIPE,
                stdout=written if output else subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=child_env,
            )
        self._output = open(output, "rb") if output else None  # noqa: SIM115 (closed in close())
        self._next_id = 0
        self._buffer = b""

    def send_line(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode("utf-8") + b"\n")
        self.process.stdin.flush()

    def send_request(self, method: str, params: dict[str, Any] | None = None, *, raw_params: str | None = None) -> int:
        """Send one request (params as JSON, or as raw JSON text); returns its id."""
        self._next_id += 1
        body = raw_params if raw_params is not None else json.dumps(params or {})
        self.send_line(f'{{"jsonrpc":"2.0","id":{self._next_id},"method":"{method}","params":{body}}}')
        return self._next_id

    def request(self, method: str, params: dict[str, Any] | None = None, *, raw_params: str | None = None) -> Any:
        """Send one request and return its answer, or None when none came."""
        return self.answer(self.send_request(method, params, raw_params=raw_params))

    def send_call(self, tool: str, raw_arguments: str) -> int:
        """Start a tool call without waiting for its answer."""
        return self.send_request("tools/call", raw_params=f'{{"name":"{tool}","arguments":{raw_arguments}}}')

    def answer(self, request_id: int, deadline_s: float = ANSWER_DEADLINE_S) -> Any:
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") == request_id:
                    return message
            chunk = self._more(deadline)
            if not chunk:
                break
            self._buffer += chunk
        return None

    def _more(self, deadline: float) -> bytes:
        """What the server wrote next, waiting until `deadline`; empty when nothing more came."""
        if self._output is not None:
            while time.monotonic() < deadline and self.process.poll() is None:
                chunk = self._output.read(65536)
                if chunk:
                    return chunk
                time.sleep(0.02)
            return self._output.read(65536)
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
        return os.read(self.process.stdout.fileno(), 65536) if ready else b""

    def initialize(self, client: str = "claude-code", version: str = "2.1.0") -> Any:
        answer = self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": client, "version": version}},
        )
        self.send_line('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return answer

    def call(self, tool: str, raw_arguments: str) -> str | None:
        """Call a tool with its arguments as raw JSON text; what the model reads, or None (no answer)."""
        answer = self.answer(self.send_call(tool, raw_arguments))
        if answer is None:
            return None
        result = answer.get("result") or {}
        texts = [c.get("text", "") for c in result.get("content", [])]
        return ("ERROR: " if result.get("isError") else "") + "".join(texts)

    def wait(self, timeout_s: float) -> int | None:
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stderr(self) -> str:
        assert self.process.stderr is not None
        return self.process.stderr.read().decode("utf-8", "replace")

    def close(self) -> None:
        """As Claude leaves a server: its stdin ends, and it exits by itself (which also keeps its
        coverage data: a killed process writes none). Killed only when it does not."""
        if self.process.poll() is None:
            if self.process.stdin is not None and not self.process.stdin.closed:
                with contextlib.suppress(BrokenPipeError):
                    self.process.stdin.close()
            if self.wait(CLOSE_WAIT_S) is None:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr, self._output):
            if stream is not None:
                stream.close()
