"""Runs under Windows Python (the wine lane): one end of the tray's named pipe, reporting what it saw.

`listen KEY`: create the pipe, say "ready", accept one client, read its JSON, answer, report.
`connect KEY`: open the pipe, send JSON, read the answer, report.
`cancel KEY`: an accept waiting in one thread is ended by close() from another; then a timeout.
The pipe's name is `pipe_name(this user's SID, KEY)`, as the tray's would be.
Each report is one JSON line on stdout.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from app.core.channel import windows_pipe


def facts(conn: object, *, we_are_server: bool) -> dict[str, object]:
    pid = windows_pipe.peer_pid(conn, we_are_server=we_are_server)  # type: ignore[arg-type]
    return {
        "peer_pid": pid,
        "peer_image": windows_pipe.process_image(pid),
        "peer_sid": windows_pipe.process_user_sid(pid),
        "peer_argv": windows_pipe.process_command_line(pid),
    }


def report(data: dict[str, object]) -> None:
    data.update(
        pid=os.getpid(),
        image=sys.executable,
        sid=windows_pipe.current_user_sid(),
        name=NAME,
        argv=windows_pipe.process_command_line(os.getpid()),
    )
    print(json.dumps(data), flush=True)


def listen(name: str) -> None:
    listener = windows_pipe.PipeListener(name)
    print(json.dumps({"ready": True}), flush=True)
    conn = listener.accept(timeout_s=60)
    seen = facts(conn, we_are_server=True)
    request = json.loads(conn.recv_bytes(maxlength=windows_pipe.MAX_MESSAGE_BYTES))
    conn.send_bytes(json.dumps({"answer": request["question"].upper(), "server_pid": os.getpid()}).encode())
    too_big_refused = False
    try:
        conn.recv_bytes(maxlength=16)  # the client sends 64 bytes next
    except OSError:
        too_big_refused = True
    conn.close()
    listener.close()
    report({"request": request, "too_big_refused": too_big_refused, **seen})


def connect(name: str) -> None:
    conn = windows_pipe.connect(name, timeout_s=30)
    seen = facts(conn, we_are_server=False)
    conn.send_bytes(json.dumps({"question": "hello über pipe", "client_pid": os.getpid()}).encode())
    answer = json.loads(conn.recv_bytes(maxlength=windows_pipe.MAX_MESSAGE_BYTES))
    conn.send_bytes(b"x" * 64)
    time.sleep(0.5)
    conn.close()
    report({"answer": answer, **seen})


def cancel(name: str) -> None:
    listener = windows_pipe.PipeListener(name)
    outcome: dict[str, object] = {}

    def wait() -> None:
        try:
            listener.accept()
            outcome["accept"] = "returned"
        except OSError as exc:
            outcome["accept"] = type(exc).__name__

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.5)
    started = time.monotonic()
    listener.close()
    waiter.join(10)
    outcome["ended_after_close"] = not waiter.is_alive()
    outcome["close_to_end_s"] = round(time.monotonic() - started, 3)
    second = windows_pipe.PipeListener(name + "0")
    try:
        second.accept(timeout_s=0.3)
        outcome["timeout"] = "returned"
    except TimeoutError:
        outcome["timeout"] = "TimeoutError"
    second.close()
    report(outcome)


if __name__ == "__main__":
    NAME = windows_pipe.pipe_name(windows_pipe.current_user_sid(), sys.argv[2])
    {"listen": listen, "connect": connect, "cancel": cancel}[sys.argv[1]](NAME)
