"""This server's side of the host: its lock and journal row, its tray link, its CommandService and
the tools on top of it.

`serve` sets all this up only once the handshake is over (`HostSide.open`), so that `initialize` is
answered as fast as the SDK alone allows (issue 11); the argument gate holds every other request
until it is done. It is torn down once, however serving ends (`HostSide.leave`).
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import secrets
import sys
from collections.abc import Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from mcp.server import MCPServer

from app.core import heap, liveness
from app.core.commands.authority import ServerAuthority
from app.core.commands.service import CommandService
from app.core.commands.tray_link import TrayLink
from app.core.data_folder import DataFolderError
from app.core.errors import CoworkError
from app.core.execution import orphans
from app.core.execution.bash_resolver import find_bash
from app.core.execution.host_environment import EnvironmentResolver
from app.core.execution.output import OutputBudget, output_budget
from app.core.execution.output_files import prune_outputs
from app.core.journal.store import Journal
from app.core.paths import AppPaths
from app.core.policy.tool_sets import ALL_TOOLS, narrowest_tools, tool_set, tools_on
from app.server.argument_gate import ServiceUnavailable
from app.server.tools import register_tools

if TYPE_CHECKING:  # a type only: `serve` loads no module it does not run
    from app.core.channel.local_link import Dial

log = logging.getLogger(__name__)


def runs_its_own_commands(tray_runs_them: bool) -> bool:
    """Whether this server decides and runs its commands itself: not while a tray runs them (its
    welcome said so; a server once bound stays bound, and refuses commands while the tray is away)."""
    return not tray_runs_them


def say(message: object) -> None:
    """Claude's log for this server shows stderr: a person reading it sees why at once."""
    print(f"cowork-terminal: {message}", file=sys.stderr, flush=True)


def load_for_commands(home: str, protected: Sequence[str]) -> None:
    """What the first command would load cold: the classifier and tree-sitter (the expressions for
    `home` and the protected paths compiled too), admission with the pins of a held command, the
    session's shell, and the executor's modules, with the container's."""
    from app.core import classifier

    classifier.warm_up(cwd=home, protected_paths=protected)
    # Loaded where used (CommandService.holds and .shell, admission's pins): not by a tray-bound server.
    for name in ("admission", "pins", "session_shell"):
        importlib.import_module(f"app.core.commands.{name}")
    importlib.import_module("app.core.execution.executor")


class HostSide:
    """What one `serve` process holds on the host, from the end of its handshake to its exit."""

    def __init__(
        self, paths: AppPaths, *, headless: bool, tools: str | None, dial: Dial | None = None, lives_long: bool = False
    ) -> None:
        self.paths = paths
        self.lives_long = lives_long  # a `serve` process of its own: its start-up objects are settled (heap.py)
        self.dial = dial  # a runner in the tray: its link reaches the hub of that process directly
        self.headless = headless
        self.tools = tools  # `serve --tools`: it only narrows what the user chose
        self.lock_key = secrets.token_hex(8)
        self.journal: Journal | None = None
        self.link: TrayLink | None = None
        self.service: CommandService | None = None
        self._lock: liveness.HeldLock | None = None
        self._authority: ServerAuthority | None = None
        self._server_id: int | None = None
        self._resolver = EnvironmentResolver()
        self._tools_on = False

    def open(self, server: MCPServer[Any]) -> CommandService | ServiceUnavailable:
        """Register this server (with the tray, or in the journal when there is none) and put the
        tools on `server`. A data folder that cannot hold the journal is not fatal: every call is then
        answered with the reason, so the model can tell the user, instead of a server Claude shows as
        "failed", and tries to open again (a disk that has room again, a folder writable again)."""
        if self.service is not None:
            return self.service
        try:
            self.journal = journal = Journal(self.paths)  # dead servers are recovered later, with their orphans
        except DataFolderError as problem:
            if not self._tools_on:
                say(problem)
                # The default set, as the journal cannot say which the user chose; kept when a later
                # call opens the host side (clients read the list once).
                self._put_tools(server, self.tools or ALL_TOOLS, OutputBudget())
            return ServiceUnavailable(str(problem))
        # The lock first, then the row: nobody may see this server registered and not holding its lock.
        with suppress(OSError):  # a read-only folder: the registration below says so
            self._lock = liveness.try_hold(self.paths.server_lock(self.lock_key))
        self.link = link = TrayLink(self.paths, headless=self.headless, lock_key=self.lock_key, dial=self.dial)
        if not link.try_connect():  # no tray: the server registers itself (a tray writes the row otherwise)
            try:
                link.server_id = journal.register_server(os.getpid(), headless=self.headless, lock_key=self.lock_key)
            except DataFolderError as problem:
                # Serve anyway: every command is refused with this reason until the disk has room (or
                # the folder is writable) again, and the model can tell the user.
                say(problem)
        self._server_id = link.server_id
        self._authority = ServerAuthority(journal, link, headless=self.headless)
        link.start()
        # Found once, then kept; a bash that is missing is looked for again at each command. Looked
        # for now only by a server that runs its commands (else the tray runs them, with its bash).
        bash = functools.cache(find_bash)
        if runs_its_own_commands(link.runs_commands):
            try:
                bash()
            except CoworkError as missing:  # every command the model sends says it too
                say(missing)
        self.service = CommandService(
            journal,
            self.paths,
            server_id=self._server_id,
            bash=bash,
            environment=self._resolver.environment_for,
            authority=self._authority,
            run_mark=orphans.server_mark(self.paths, self.lock_key),
        )
        # A tray's choice of tools beats the file's.
        chosen = link.state.tools if link.state is not None else tool_set(journal)
        if not self._tools_on:
            self._put_tools(server, narrowest_tools(chosen, self.tools), output_budget(journal))
        return self.service

    def _put_tools(self, server: MCPServer[Any], tools: str, budget: OutputBudget) -> None:
        register_tools(server, lambda: self.service, tools_on(sys.platform, tools), budget)
        self._tools_on = True

    def prepare(self) -> None:
        """Slow start-up work, in a worker thread once the client is served: loading the classifier and
        tree-sitter, the login-shell probe (macOS), and, with no tray to do it (its supervisor does, at
        its start and hourly), retention (it may delete thousands of rows; its own connection) and
        ending what servers killed without a word left running. Then, in a process of its own, what it
        loaded is kept out of the garbage collector's walks (heap.settle)."""
        try:
            self._start_up_work()
        finally:
            if self.lives_long:
                heap.settle()

    def _start_up_work(self) -> None:
        if self.service is None:
            return
        if runs_its_own_commands(self.link is not None and self.link.runs_commands):
            self.warm_up()
        if self._authority is None or self._authority.tethered:
            return  # the tray writes the journal, and it recovers crashed servers and their orphans
        try:
            with Journal(self.paths) as background:
                background.apply_retention()
                prune_outputs(self.paths.outputs)  # whole outputs past their retention period
                orphans.end_left_behind(self.paths, background)  # what a killed server left
        except DataFolderError as problem:  # a full disk: the calls say so; the next start retries
            log.warning("start-up upkeep skipped: %s", problem)

    def warm_up(self) -> None:
        """The classifier, tree-sitter, the login-shell probe and the executor's modules: only for a
        server that runs its commands itself (2.7 MB of a server's memory, issue 21; a tray-bound one
        never does)."""
        if self.service is None:
            return
        load_for_commands(self.service.home, self.service.protected_paths)
        self._resolver.prepare()

    def leave(self) -> None:
        """Close this server's rows, leave its tray and give up its lock; once, however serving ended."""
        try:
            if self._authority is not None:
                self._authority.end(self._server_id)
            elif self._server_id is not None and self.journal is not None:
                self.journal.end_server(self._server_id)
        except CoworkError as problem:  # a full disk: the next process marks it, once it can write
            say(problem)
        self._authority = self._server_id = None
        if self.link is not None:
            self.link.close()
            self.link = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        with suppress(OSError):  # a read-only folder
            self.paths.server_lock(self.lock_key).unlink(missing_ok=True)
        if self.journal is not None:
            self.journal.close()
            self.journal = None
