"""Red team 13 (wine lane): a job left by a command of a tray that has since quit, asking the next tray.

`leave FOLDER ASKER`: a `serve` bound to the running tray runs `python ASKER ... &` (it ends at once,
the asker writes its pid and waits in the command's job for FOLDER/go), then this process, outside
every job, quits the tray (accepted from outside). `ask FOLDER`: with the next tray up, whether the
asker still lives; if it does, FOLDER/go is made and its answers are read back. One JSON line each."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from app.core.channel.client import NoTray, TrayRefused, ask_tray
from app.core.paths import AppPaths

TRAY_WAIT_S = 90.0
ANSWER_WAIT_S = 150.0


def step(what: str) -> None:
    print(f"{time.monotonic():.1f} {what}", file=sys.stderr, flush=True)


def ask(paths: AppPaths, op: str) -> str:
    try:
        return "accepted: " + str(ask_tray(paths, op, wait_s=60.0).get("message"))
    except (NoTray, TrayRefused) as exc:
        return f"{type(exc).__name__}: {exc}"


def alive(pid: int) -> bool:
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    handle = kernel32.OpenProcess(0x1000 | 0x0400, False, pid)
    if not handle:
        return False
    code = ctypes.c_ulong(0)
    kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
    kernel32.CloseHandle(handle)
    return code.value == 259  # STILL_ACTIVE


def wait_for_tray(paths: AppPaths) -> dict:
    deadline = time.monotonic() + TRAY_WAIT_S
    while True:
        try:
            return json.loads(str(ask_tray(paths, "state", wait_s=10.0).get("message")))
        except (NoTray, TrayRefused) as exc:
            step(f"no tray yet: {exc!r}")
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


async def leave(folder: str, asker: str) -> dict:
    paths = AppPaths.from_environment()
    report: dict = {"state_before": wait_for_tray(paths)}
    answers, go = os.path.join(folder, "answers.json"), os.path.join(folder, "go")
    for stale in (answers, go, answers + ".pid"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(stale)
    params = StdioServerParameters(command=sys.executable, args=["-I", "-m", "app", "serve"])
    async with Client(params, mode="legacy") as client:
        command = f"C:/python/python.exe '{asker}' '{answers}' '{go}' >/dev/null 2>&1 &"
        result = await client.call_tool("execute_command", {"command": command})
        report["left_command"] = json.loads(result.content[0].text) if not result.is_error else result.content[0].text
    deadline = time.monotonic() + 60
    while not os.path.exists(answers + ".pid") and time.monotonic() < deadline:
        await anyio.sleep(0.2)
    with open(answers + ".pid", encoding="utf-8") as told:
        report["asker_pid"] = pid = int(told.read())
    report["asker_alive_before_quit"] = alive(pid)
    await anyio.sleep(1.0)
    report["quit"] = ask(paths, "quit")
    return report


async def ask_again(folder: str) -> dict:
    paths = AppPaths.from_environment()
    report: dict = {"state_before": wait_for_tray(paths)}
    answers, go = os.path.join(folder, "answers.json"), os.path.join(folder, "go")
    with open(answers + ".pid", encoding="utf-8") as told:
        report["asker_alive"] = alive(int(told.read()))
    if not report["asker_alive"]:
        report["left_behind"] = None  # it ended with the tray whose command left it
        return report
    open(go, "w").close()
    deadline = time.monotonic() + ANSWER_WAIT_S
    while not os.path.exists(answers) and time.monotonic() < deadline:
        await anyio.sleep(0.2)
    with open(answers, encoding="utf-8") as told:
        report["left_behind"] = json.load(told)
    return report


if __name__ == "__main__":
    report = anyio.run(leave, sys.argv[2], sys.argv[3]) if sys.argv[1] == "leave" else anyio.run(ask_again, sys.argv[2])
    print(json.dumps(report), flush=True)
    sys.stderr.flush()
    os._exit(0)
