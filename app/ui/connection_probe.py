"""Runs "Check connection" for the tray and the Welcome window: `cowork-terminal check --client ID
--json` in its own process (the MCP SDK never loads in a UI process), and reads its verdict."""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
from collections.abc import Sequence

from app.core.claude import config as cc
from app.core.i18n import _
from app.core.i18n.formats import format_number
from app.ui.tray.platforms import run_captured

log = logging.getLogger(__name__)

# Bounded: reading Claude Code's entry through `claude` (up to its own timeout), the 30 s probe of
# the server, and the helper's start-up.
CHECK_PROCESS_TIMEOUT_S = cc.CLAUDE_CLI_TIMEOUT_S + 45.0
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
