"""The "Check connection" action: start the exact server command a Claude client's config holds, run `echo ok`.

It speaks to the server the way Claude Desktop does (the SDK's stdio client, the classic
`initialize` handshake, the entry's own command, arguments and environment), so a success means
Claude's next start will work too, and a failure is named precisely: no entry, an entry from an
older install or another program, a command that does not exist, a server that crashed at start
(with what it wrote to stderr), bash missing, host access paused, no tray running, or a timeout.

Presence, decided here: the check never takes the tray lock. Run from the tray, the tray's own
lock is held, so the server runs the command. Run from the CLI with no tray, the server answers
but refuses commands; that is reported as its own result (`no-tray`), because it is exactly what
Claude would meet. An entry made with `--headless` runs without a tray either way.

The check runs a real command, so it appears in the activity log under the client name
`cowork-terminal-check`; the tray does not announce that name as a newly connected client.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from app import __version__
from app.core.authority.supervisor import CHECK_CLIENT_NAME
from app.core.claude import config as cc
from app.core.claude.locations import ClientLocation
from app.core.errors import CoworkError
from app.core.execution.bash_resolver import BASH_PATH_ENV, BashNotFoundError, find_bash
from app.core.i18n import _
from app.core.i18n.formats import format_number
from app.core.messages import NO_TRAY_MESSAGE, PAUSED_MESSAGE

CHECK_COMMAND = "echo ok"
CHECK_OUTPUT = "ok\n"
# Spawn-to-initialize of `serve` measured 1.2-1.6 s on 2-core machines; a frozen app's first start
# after install (antivirus scans, cold disk) can take several times that.
CHECK_TIMEOUT_S = 30.0
STDERR_EXCERPT_CHARS = 2000
# How the server's refusal reads when bash is missing (execution.bash_resolver's and commands.service's words).
BASH_MISSING_SIGNS = ("bash was not found", BASH_PATH_ENV.lower(), "bash could not be started")

OK = "ok"
NO_ENTRY = "no-entry"
STALE_ENTRY = "stale-entry"
FOREIGN_ENTRY = "foreign-entry"
ALTERED_ENTRY = "altered-entry"
CONFIG_UNREADABLE = "config-unreadable"
COMMAND_NOT_FOUND = "command-not-found"
CRASHED_AT_START = "crashed-at-start"
BASH_NOT_FOUND = "bash-not-found"
PAUSED = "paused"
NO_TRAY = "no-tray"
REFUSED = "refused"
WRONG_OUTPUT = "wrong-output"
TIMED_OUT = "timed-out"


@dataclass(frozen=True)
class CheckResult:
    """What the check found; `message` is whole sentences for the user, naming what to do next."""

    client_id: str
    kind: str
    message: str
    entry: Any = None
    stderr: str = ""  # the server's own words, when it wrote any

    @property
    def ok(self) -> bool:
        return self.kind == OK

    def to_json(self) -> dict[str, Any]:
        return {
            "client": self.client_id,
            "ok": self.ok,
            "kind": self.kind,
            "message": self.message,
            "entry": self.entry,
            "stderr": self.stderr,
        }


def read_entry(location: ClientLocation) -> Any:
    """Our entry in `location`'s config (Desktop's JSON file, Claude Code's servers file), or None."""
    if location.config_path is not None or location.cli_path is not None:
        return cc.location_entry(location)
    raise CoworkError(
        _("{client} is not installed here: {evidence}").format(client=location.name, evidence=location.evidence)
    )


def check_client(
    location: ClientLocation, wanted: Mapping[str, Any], *, timeout_s: float = CHECK_TIMEOUT_S
) -> CheckResult:
    """Check one client's entry end to end. Blocking (seconds): call it off any UI thread."""
    try:
        entry = read_entry(location)
    except CoworkError as exc:
        return CheckResult(location.client_id, CONFIG_UNREADABLE, f"{location.name}: {exc}")
    return check_entry(location.client_id, location.name, entry, wanted, timeout_s=timeout_s)


def check_entry(
    client_id: str,
    client_name: str,
    entry: Any,
    wanted: Mapping[str, Any],
    *,
    timeout_s: float = CHECK_TIMEOUT_S,
) -> CheckResult:
    """Judge the entry against the one this app would write, then run it if it is this app's."""
    state = cc.classify_entry(entry, wanted)
    if state == cc.ABSENT:
        return CheckResult(
            client_id,
            NO_ENTRY,
            _(
                "{client} has no {entry} entry, so Claude cannot start Cowork Terminal. "
                "Connect it from the tray menu (Connect to Claude) or with `cowork-terminal connect`."
            ).format(client=client_name, entry=repr(cc.SERVER_NAME)),
        )
    if state == cc.STALE:
        command = str(entry.get("command"))
        message = [
            _("{client}'s entry is stale: it starts an older install of Cowork Terminal ({command}), not this one.")
        ]
        if not Path(command).exists():
            message.append(_("That program no longer exists."))
        message.append(_("Connect again to point it at this install."))
        return CheckResult(client_id, STALE_ENTRY, " ".join(message).format(client=client_name, command=command), entry)
    if state == cc.FOREIGN:
        return CheckResult(
            client_id,
            FOREIGN_ENTRY,
            _(
                "{client}'s {name} entry runs another program: {entry}. "
                "Connect again to replace it with this app (the old file is kept as a backup)."
            ).format(client=client_name, name=repr(cc.SERVER_NAME), entry=json.dumps(entry)),
            entry,
        )
    if state == cc.ALTERED:
        return CheckResult(
            client_id,
            ALTERED_ENTRY,
            _(
                "{client}'s {name} entry runs Cowork Terminal with settings it did not write ({added}), which "
                "can change what runs. Connect again to repair it."
            ).format(client=client_name, name=repr(cc.SERVER_NAME), added=", ".join(cc.added_to_entry(entry))),
            entry,
        )
    return anyio.run(_probe, client_id, client_name, dict(entry), timeout_s)


def _leaves(error: BaseException) -> list[BaseException]:
    """The real errors inside (nested) exception groups, which the SDK's task groups raise."""
    inner = getattr(error, "exceptions", None)
    if not inner:
        return [error]
    return [leaf for sub in inner for leaf in _leaves(sub)]


def _bash_problem(entry_env: dict[str, str] | None, text: str) -> str:
    """Why bash is missing, for the person: the server's words are the model's (English), so the
    same search is made here, in the environment the server had, then in this one (a tray that runs
    the commands gives them its own: the check runs in it, or in the user's shell), and said in the
    user's language."""
    from mcp.client.stdio import get_default_environment

    for environ in ({**get_default_environment(), **(entry_env or {})}, dict(os.environ)):
        try:
            find_bash(environ)
        except BashNotFoundError as problem:
            return problem.for_person()
    return text  # found here: the server's own words say what went wrong there


def _excerpt(text: str) -> str:
    text = text.strip()
    return text if len(text) <= STDERR_EXCERPT_CHARS else "..." + text[-STDERR_EXCERPT_CHARS:]


async def _probe(client_id: str, client_name: str, entry: dict[str, Any], timeout_s: float) -> CheckResult:
    # The SDK (about 0.7 s of CPU to import) only for an entry that is run: an entry that is
    # missing, stale, another program's or altered is answered without it.
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import Implementation

    command = str(entry["command"])
    params = StdioServerParameters(
        command=command,
        args=[str(a) for a in entry.get("args", [])],
        env={str(k): str(v) for k, v in (entry.get("env") or {}).items()} or None,
    )
    me = Implementation(name=CHECK_CLIENT_NAME, version=__version__)

    def result(kind: str, message: str, stderr: str = "") -> CheckResult:
        return CheckResult(client_id, kind, message, entry, _excerpt(stderr))

    # A real file, not a pipe: the server's stderr must never fill up and block it.
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:

        def stderr() -> str:
            errlog.flush()
            errlog.seek(0)
            return errlog.read()

        try:
            with anyio.fail_after(timeout_s):
                async with Client(stdio_client(params, errlog=errlog), mode="legacy", client_info=me) as client:
                    reply = await client.call_tool("execute_command", {"command": CHECK_COMMAND})
        except TimeoutError:
            return result(
                TIMED_OUT,
                _(
                    "The server for {client} did not answer within {seconds} s ({command}). "
                    "It may be stuck at start; the app log and its stderr below may say why."
                ).format(client=client_name, seconds=format_number(timeout_s, None), command=command),
                stderr(),
            )
        except OSError as exc:  # raised by the spawn itself: the command cannot be started at all
            return result(
                COMMAND_NOT_FOUND,
                _(
                    "{client}'s entry starts {command}, which cannot be run: {error}. "
                    "Connect again from this install to write a working entry."
                ).format(client=client_name, command=command, error=exc.strerror or exc),
            )
        except Exception as exc:  # the connection closed before an answer: the server died
            said = stderr()
            reasons = "; ".join(str(leaf) for leaf in _leaves(exc))
            stopped = _("The server for {client} stopped at start ({reasons}).").format(
                client=client_name, reasons=reasons
            )
            detail = _("It wrote:") + "\n" + _excerpt(said) if said.strip() else _("It wrote nothing to stderr.")
            return result(CRASHED_AT_START, f"{stopped} {detail}", said)
        said = stderr()

    text = reply.content[0].text if reply.content and hasattr(reply.content[0], "text") else ""
    if reply.is_error:
        if PAUSED_MESSAGE in text:
            return result(
                PAUSED,
                _(
                    "{client}'s server starts and answers, but host access is paused, so it refused "
                    "the test command. Untick Pause host access to let Claude run commands."
                ).format(client=client_name),
            )
        if NO_TRAY_MESSAGE in text:
            return result(
                NO_TRAY,
                _(
                    "{client}'s server starts and answers, but refuses commands because the Cowork Terminal "
                    "app is not running. Start the app (it puts an icon in the tray), then check again."
                ).format(client=client_name),
            )
        if any(sign in text.lower() for sign in BASH_MISSING_SIGNS):
            cannot = _("{client}'s server starts, but cannot run bash.").format(client=client_name)
            return result(BASH_NOT_FOUND, f"{cannot} {_bash_problem(params.env, text)}", said)
        refused = _("{client}'s server refused the test command: {text}").format(client=client_name, text=text)
        return result(REFUSED, refused, said)

    data = reply.structured_content or {}
    if data.get("stdout") == CHECK_OUTPUT and data.get("exitCode") == 0:
        ok = _("{client}'s entry works: the server it starts ran `{command}`.")  # Claude loads it at its start
        return result(OK, ok.format(client=client_name, command=CHECK_COMMAND))
    return result(
        WRONG_OUTPUT,
        _(
            "{client}'s server ran `{command}` but got back {output} instead of {expected}. "
            "Something in the shell's start-up files may print text or change `echo`."
        ).format(client=client_name, command=CHECK_COMMAND, output=json.dumps(data)[:500], expected=repr(CHECK_OUTPUT)),
        said,
    )
