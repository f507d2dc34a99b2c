"""One stand-in for Claude Code's `claude` CLI, for every test that needs Claude Code installed.

It records each call in `calls.log` beside it (`["claude", *argv]`), waits `claude-delay-s` seconds
when that file is there, fails when an argument equals $FAKE_CLAUDE_FAIL, and speaks only what the
app runs: `mcp add`, `mcp add-json` and `mcp remove` at user scope. Those edit the user-scope servers
in Claude Code's own file (`.claude.json` in $CLAUDE_CONFIG_DIR, else in the home folder), keeping
its other keys, with the fields the real CLI writes (`type`, an empty `env`). Anything else (such
as `mcp get`, which the app no longer runs) exits 2: a test then fails on it.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

FAKE_CLAUDE = """#!{python}
import json, os, pathlib, sys, time
here = pathlib.Path(__file__).parent
args = sys.argv[1:]
with open(here / "calls.log", "a") as log:
    log.write(json.dumps(["claude", *args]) + "\\n")
delay = here / "claude-delay-s"
if delay.exists():
    time.sleep(float(delay.read_text()))
if os.environ.get("FAKE_CLAUDE_FAIL") in args:
    print("fake failure", file=sys.stderr)
    sys.exit(3)
file = pathlib.Path(os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~"), ".claude.json")
data = json.loads(file.read_text()) if file.exists() else {{"numStartups": 1}}
servers = data.setdefault("mcpServers", {{}})
if args[:4] == ["mcp", "add", "--scope", "user"] and args[5] == "--":
    if args[4] in servers:
        print("MCP server " + args[4] + " already exists in user config", file=sys.stderr)
        sys.exit(1)
    servers[args[4]] = {{"type": "stdio", "command": args[6], "args": args[7:], "env": {{}}}}
elif args[:4] == ["mcp", "add-json", "--scope", "user"]:
    servers[args[4]] = json.loads(args[5])
elif args[:4] == ["mcp", "remove", "--scope", "user"]:
    if servers.pop(args[4], None) is None:
        print("No user-scoped MCP server found with name: " + args[4], file=sys.stderr)
        sys.exit(1)
else:
    print("unexpected", args, file=sys.stderr)
    sys.exit(2)
file.parent.mkdir(parents=True, exist_ok=True)
file.write_text(json.dumps(data, indent=2))
"""

# What Claude Code's file holds besides the servers: kept whole by every change.
OTHER_KEYS = {"numStartups": 12, "projects": {"/home/user/src": {"allowedTools": []}}}


def install_fake_claude(folder: Path) -> Path:
    """Write the stand-in `claude` into `folder` (made if missing); its calls go to folder/calls.log."""
    folder.mkdir(parents=True, exist_ok=True)
    claude = folder / "claude"
    claude.write_text(FAKE_CLAUDE.format(python=sys.executable))
    claude.chmod(claude.stat().st_mode | stat.S_IXUSR)
    return claude


def claude_calls(folder: Path) -> list[list[str]]:
    """Every call of the stand-in in `folder`, oldest first, each as ["claude", *argv]."""
    log = folder / "calls.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def user_servers(file: Path) -> dict[str, Any]:
    """The user-scope servers in Claude Code's file, as it holds them."""
    return json.loads(file.read_text()).get("mcpServers", {}) if file.exists() else {}


def write_user_servers(file: Path, servers: dict[str, Any]) -> None:
    """Claude Code's file with these user-scope servers and other keys of its own."""
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({**OTHER_KEYS, "mcpServers": servers}, indent=2))
