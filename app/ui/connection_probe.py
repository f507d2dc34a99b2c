"""Runs "Check connection" for the tray and the Welcome window: `cowork-terminal check --client ID
--json` in its own process (the MCP SDK never loads in a UI process), reads its verdict, and says
what it truly found: the check proves the entry starts a working server, not that Claude loaded it
(that takes Claude's restart, and Claude installed), so the words come from what the journal shows
of Claude's own servers, and say what to do next in Claude."""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
from collections.abc import Iterable, Sequence

from app.core.claude import locations as cl
from app.core.claude.names import friendly_client_name
from app.core.i18n import N_, _
from app.core.i18n.formats import format_number
from app.core.journal.records import ServerRecord
from app.ui.tray.platforms import run_captured

log = logging.getLogger(__name__)

# Bounded: the 30 s probe of the server and the helper's start-up (the check reads Claude Code's
# entry from its file: no `claude` to wait for).
CHECK_PROCESS_TIMEOUT_S = 45.0
CHECK_STDERR_EXCERPT_CHARS = 500


def run_check(check_command: Sequence[str], client_id: str, name: str, timeout_s: float) -> tuple[bool, str]:
    """Run the check of one client and read its verdict: (ok, message in words for the user)."""
    argv = [*check_command, "--client", client_id, "--json"]
    try:
        code, out, err = run_captured(argv, timeout_s)
    except subprocess.TimeoutExpired:
        log.warning("check %s: no answer within %s s from %s", client_id, timeout_s, argv)
        return False, _(
            "The check of {client} did not finish within {seconds} s, so it was stopped. The app log has the details."
        ).format(client=name, seconds=format_number(timeout_s, None))
    except OSError as exc:
        log.warning("check %s could not start %s: %s", client_id, argv, exc)
        return False, _("The check could not start: {error}.").format(error=exc)
    for line in out.splitlines():
        with contextlib.suppress(ValueError):
            report = json.loads(line)
            if isinstance(report, dict) and report.get("client") == client_id:
                log.info("check %s: %s %s", client_id, report.get("kind"), report.get("stderr", ""))
                return bool(report.get("ok")), str(report.get("message", ""))
    said = err.strip()[-CHECK_STDERR_EXCERPT_CHARS:]
    log.warning("check %s gave no verdict (exit code %s): %s", client_id, code, said)
    said = said or _("it exited with code {code}").format(code=code)
    return False, _("The check could not run: {error}").format(error=said)


WORKS = N_("{client} is connected, and a test command ran. Try asking Claude “What is in my Downloads folder?”")
READY_NOT_LOADED = N_(
    "Cowork Terminal started the way {client} will start it and ran a test command, but {client} has "
    "not connected yet. {restart}, then ask Claude “What is in my Downloads folder?”"
)
READY_NOT_INSTALLED = N_(
    "Cowork Terminal is ready for {client}, but {client} was not found on this computer. Install it and "
    "open it, then ask Claude “What is in my Downloads folder?”"
)


def restart_advice(client_id: str, name: str) -> str:
    """How this client reads its settings again: a new session for Claude Code, a real quit elsewhere."""
    if client_id == cl.CLAUDE_CODE:
        return _("Start a new Claude Code session")
    return _("Quit {client} completely and open it again").format(client=name)


def check_notice(
    client_id: str, name: str, ok: bool, message: str, *, installed: bool, claude_connected: bool
) -> tuple[bool, str, str]:
    """(connected, title, text) for a check's verdict: "connected" only once Claude's own server
    connected; before that, ready, with the step that is missing in Claude."""
    if not ok:
        return False, _("Connection problem: {client}").format(client=name), message
    if claude_connected:
        return True, _("Connection works"), _(WORKS).format(client=name)
    ready = _("Ready for {client}").format(client=name)
    if not installed:
        return False, ready, _(READY_NOT_INSTALLED).format(client=name)
    return False, ready, _(READY_NOT_LOADED).format(client=name, restart=restart_advice(client_id, name))


def live_client_names(servers: Iterable[ServerRecord]) -> set[str]:
    """The Claude apps (by the names people know) whose own server runs now, from the journal's live rows."""
    return {friendly_client_name(s.client_name) for s in servers if s.client_name and s.state == "live"}
