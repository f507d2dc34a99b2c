"""installer/linux/build_tools.sh: what build_linux.sh uses to find its programs, run as a normal user would."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "installer" / "linux" / "build_tools.sh"
USER_PATH = "/usr/local/bin:/usr/bin:/bin"  # a normal user's PATH on Debian: no /sbin, no /usr/sbin


def run_tools(script: str, path: str = USER_PATH) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/bash", "-c", f'source "$1"; {script}', "bash", str(TOOLS)],
        env={"PATH": path}, capture_output=True, text=True, timeout=30,
    )  # fmt: skip


def test_ldconfig_is_found_in_sbin_when_the_path_has_no_sbin() -> None:
    if not any(Path(folder, "ldconfig").exists() for folder in ("/usr/sbin", "/sbin")):
        pytest.skip("this machine has no ldconfig in /sbin or /usr/sbin")
    result = run_tools("find_tool ldconfig")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() in ("/usr/sbin/ldconfig", "/sbin/ldconfig")


def test_every_missing_program_is_named_with_its_package_at_once() -> None:
    result = run_tools("require_tools no-such-tool-a=pkg-a bash=bash no-such-tool-b=pkg-b")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "build_linux: error: missing no-such-tool-a (apt-get install pkg-a)",
        "build_linux: error: missing no-such-tool-b (apt-get install pkg-b)",
    ]


def test_the_build_runs_ldconfig_only_through_the_path_find_tool_gave() -> None:
    # A bare `ldconfig -p` is "command not found" on a user's PATH, and the build then blamed the
    # bundle's libraries ("libdl.so.2 is needed by the bundle but not installed here").
    script = (ROOT / "installer" / "build_linux.sh").read_text()
    tools = TOOLS.read_text()
    assert "ldconfig -p" not in script
    assert 'ldconfig="$(find_tool ldconfig)"' in tools
    runs = [line for line in tools.splitlines() if re.search(r"ldconfig\S* -p", line) and "printf" not in line]
    assert runs and all('"$ldconfig" -p' in line for line in runs), runs
