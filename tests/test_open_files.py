"""The tray and a server raise their soft limit on open files (core/open_files.py): one agent's 180
background jobs had used up a tray started with the desktop's 1,024 (a red team, 2026-12-05)."""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

import pytest

from app.core.open_files import WANTED, wanted_limit
from tests.raw_stdio import RawServer

INFINITY = -1


@pytest.mark.parametrize(
    ("soft", "hard", "wanted"),
    [(1024, 524_288, WANTED), (1024, 4096, 4096), (1024, INFINITY, WANTED), (65_536, 524_288, 65_536), (256, 256, 256)],
)
def test_the_soft_limit_asked_for_stays_within_the_hard_one_and_never_lowers_it(
    soft: int, hard: int, wanted: int
) -> None:
    assert wanted_limit(soft, hard, INFINITY) == wanted


def soft_limit_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open files limit")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc (Linux)")
def test_a_server_started_with_the_desktops_limit_raises_it_for_the_commands_it_runs(home: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # as a desktop starts programs; inherited
    try:
        server = RawServer(home, "--headless")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    try:
        server.initialize()
        said = server.call("execute_command", json.dumps({"command": "ulimit -Sn"}))
        assert soft_limit_of(server.process.pid) == wanted_limit(1024, hard, resource.RLIM_INFINITY) > 1024
    finally:
        server.close()
    assert said is not None and f'"stdout":"{wanted_limit(1024, hard, resource.RLIM_INFINITY)}\\n"' in said.replace(
        " ", ""
    ), said
