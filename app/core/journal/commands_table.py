"""The journal's commands table: a command's row from its start (or hold) to its end, the user's
answers and Stop requests, and the reads the log window, the CLI and the servers make."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from app.core import settings
from app.core.journal import opening, retention
from app.core.journal.connection import Connection, row_id
from app.core.journal.records import (
    ACTIVE_MARKS,
    ACTIVE_STATUSES,
    REFUSED_ENV_KEYS_KEPT,
    CommandRecord,
    Outcome,
    Status,
    bounded,
    placeholders,
    preview,
    storable,
)
from app.core.journal.schema import COMMAND_COLUMNS
from app.core.messages import HOLD_EXPIRED_REASON

log = logging.getLogger(__name__)


class CommandsTable(Connection):
    """Every query of the commands table."""

    def begin_command(
        self,
        *,
        command: str,
        cwd: str | None,
        env_keys: Iterable[str] = (),
        timeout_ms: int | None = None,
        server_id: int | None = None,
        server_pid: int | None = None,
        client_name: str | None = None,
        client_version: str | None = None,
        tool: str = "execute_command",
        tier: str | None = None,
        status: Status = Status.RUNNING,
        reason: str | None = None,
        confirmation_id: str | None = None,
        hold_expires_at: float | None = None,
        command_id: int | None = None,
        above: int = 0,
    ) -> int:
        """Write the row before anything runs, so even a crash mid-command leaves a record. `command_id`
        only in a journal started anew under running servers: its ids go on after the old file's,
        so that no job id a model holds names another command. `above`: an id the caller still
        follows (the tray's live commands), which the new row's must exceed."""
        now = time.time()
        keys = sorted(storable(k) for k in env_keys)
        command, cwd = storable(command), None if cwd is None else storable(cwd)
        if status is Status.REFUSED:
            command, cwd = bounded(command), None if cwd is None else bounded(cwd)
            keys = [bounded(k, 200) for k in keys[:REFUSED_ENV_KEYS_KEPT]]
            reason = None if reason is None else bounded(storable(reason))
        with self._write() as db:
            if command_id is None:  # above every id this journal gave before it was cleared or renewed
                lowest = max(above, _floor(db))
                if lowest and _last_id(db) < lowest:
                    command_id = lowest + 1
            cursor = db.execute(
                "INSERT INTO commands(id, server_id, server_pid, client_name, client_version, tool, command, "
                "cwd, env_keys, timeout_ms, tier, status, reason, created_at, started_at, confirmation_id, "
                "hold_expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    command_id,
                    server_id,
                    server_pid,
                    client_name,
                    client_version,
                    tool,
                    command,
                    cwd,
                    json.dumps(keys),
                    timeout_ms,
                    tier,
                    status.value,
                    reason,
                    now,
                    now if status is Status.RUNNING else None,
                    confirmation_id,
                    hold_expires_at,
                ),
            )
            if server_id is not None:  # "last seen" for the supervisor, in the same transaction
                db.execute("UPDATE servers SET last_seen = ? WHERE id = ?", (now, server_id))
        return row_id(cursor)

    def last_command_id(self) -> int:
        """The highest command id this journal gave: its rows', or what Clear history and retention
        deleted (0 when none)."""
        return ids_given(self._db)

    def raise_id_floor(self, last: int) -> None:
        """Ids go on above `last` (a new journal under servers and a tray that still know the old
        one's ids: a review, 2026-12-05, found a Stop, an end and an output reaching another agent's
        command that was given the same id)."""
        with self._write() as db:
            _raise_floor(db, last)

    def mark_started(self, command_id: int) -> bool:
        """A held command starts: its row says running. False when there is no such row (deleted
        under the caller, or a journal started anew without it): the caller must not run it unrecorded."""
        with self._write() as db:
            cursor = db.execute(
                "UPDATE commands SET status = ?, started_at = ? WHERE id = ?",
                (Status.RUNNING.value, time.time(), command_id),
            )
        return cursor.rowcount == 1

    def write_back(self, record: CommandRecord) -> bool:
        """A row again under its own id, as the tray remembers it: a journal deleted, replaced or
        damaged under commands that still run or wait gets their rows back (a red team, 2026-12-06:
        a job ran on with no row, and an allowed `rm -rf` ran unrecorded). False when a row already
        has that id (kept: it is not ours to overwrite)."""
        values = {**record.to_json(), "env_keys": json.dumps(sorted(storable(k) for k in record.env_keys))}
        values.update(command=storable(record.command), cwd=None if record.cwd is None else storable(record.cwd))
        values["timed_out"] = int(record.timed_out)
        columns = [column.strip() for column in COMMAND_COLUMNS.split(",")]
        with self._write() as db:
            cursor = db.execute(
                f"INSERT INTO commands({COMMAND_COLUMNS}) VALUES ({placeholders(len(columns))}) "
                "ON CONFLICT(id) DO NOTHING",
                tuple(values[column] for column in columns),
            )
        return cursor.rowcount == 1

    def finish_command(self, command_id: int, outcome: Outcome) -> None:
        """Record how a command ended. A full disk raises DataFolderError (an sqlite3.OperationalError)
        as any write does: the caller keeps the end and writes it once the file takes writes again
        (the tray's `Record.unwritten_ends`, a headless server's own), never taking it for written
        (a red team, 2026-12-06: logged here, the end was lost and its row said `interrupted`)."""
        now = time.time()
        with self._write() as db:
            db.execute(
                "UPDATE commands SET status = ?, reason = ?, exit_code = ?, timed_out = ?, ended_at = ?, "
                "duration_ms = ?, stdout_bytes = ?, stderr_bytes = ?, stdout_preview = ?, "
                "stderr_preview = ? WHERE id = ?",
                (
                    outcome.status.value,
                    outcome.reason,
                    outcome.exit_code,
                    int(outcome.timed_out),
                    now,
                    outcome.duration_ms,
                    outcome.stdout_bytes,
                    outcome.stderr_bytes,
                    outcome.extra.get("stdout_preview", preview(outcome.stdout)),
                    outcome.extra.get("stderr_preview", preview(outcome.stderr)),
                    command_id,
                ),
            )

    def set_live_output(
        self, command_id: int, stdout: bytes, stderr: bytes, stdout_bytes: int, stderr_bytes: int
    ) -> None:
        """The output so far of a command that still runs, so the log shows it live (issue 24, item 5);
        its end writes the final one."""
        with self._write() as db:
            db.execute(
                "UPDATE commands SET stdout_bytes = ?, stderr_bytes = ?, stdout_preview = ?, stderr_preview = ? "
                "WHERE id = ? AND status = ?",
                (stdout_bytes, stderr_bytes, preview(stdout), preview(stderr), command_id, Status.RUNNING.value),
            )

    # -- approvals: decided by the user through the tray, the log window or the CLI, never the model --

    def decide(
        self, command_id: int, *, allowed: bool, by: str, rule_id: int | None = None, taken: bool = False
    ) -> bool:
        """Record the user's answer to a held command; False when it is no longer waiting.
        `rule_id`: the user's rule that answered it (the tray applies rules; see core/policy/rules.py).
        `taken`: the tray took the hold from its memory and pushed the answer to its server first,
        which may have recorded the command's start or end before this: recorded whatever its status
        (a Deny's decision was missing from the row when its server was quicker than the tray)."""
        now = time.time()
        with self._write() as db:
            cursor = db.execute(
                "UPDATE commands SET decision = ?, decided_by = ?, decided_at = ?, allowed_by_rule = ? "
                "WHERE id = ? AND decision IS NULL AND (? OR (status = ? AND hold_expires_at > ?))",
                (
                    "allowed" if allowed else "denied",
                    by,
                    now,
                    rule_id if allowed else None,
                    command_id,
                    taken,
                    Status.WAITING.value,
                    now,
                ),
            )
        return cursor.rowcount == 1

    def find_held(self, confirmation_id: str) -> CommandRecord | None:
        row = self._db.execute(
            f"SELECT {COMMAND_COLUMNS} FROM commands WHERE confirmation_id = ?", (confirmation_id,)
        ).fetchone()
        return None if row is None else CommandRecord.from_row(row)

    def pending_approvals(self, now: float | None = None) -> list[CommandRecord]:
        """Held commands still waiting for the user's answer, oldest first."""
        rows = self._db.execute(
            f"SELECT {COMMAND_COLUMNS} FROM commands WHERE status = ? AND decision IS NULL "
            f"AND hold_expires_at > ? ORDER BY id",
            (Status.WAITING.value, now or time.time()),
        ).fetchall()
        return [CommandRecord.from_row(r) for r in rows]

    def set_hold_expiry(self, command_id: int, expires_at: float) -> None:
        """A held command's clock restarts when the user can see it (the tray's approval prompt)."""
        with self._write() as db:
            db.execute(
                "UPDATE commands SET hold_expires_at = ? WHERE id = ? AND status = ?",
                (expires_at, command_id, Status.WAITING.value),
            )

    def expire_holds(self, now: float | None = None) -> int:
        """Close holds nobody confirmed in time: they can never run any more."""
        now = now or time.time()
        with self._write() as db:
            cursor = db.execute(
                "UPDATE commands SET status = ?, reason = ?, ended_at = ? WHERE status = ? AND hold_expires_at <= ?",
                (Status.REFUSED.value, HOLD_EXPIRED_REASON, now, Status.WAITING.value, now),
            )
        return cursor.rowcount

    def was_left_running(self, command_id: int) -> bool:
        """Whether the command was still running when its server went: its processes are orphans."""
        record = self.get_command(command_id)
        return record is not None and (record.status is Status.INTERRUPTED or record.status.is_active)

    def request_stop(self, command_id: int, by: str | None = None) -> bool:
        """The user's Stop button (`by` None), or another agent's command_stop (`by` AGENT_STOP_BY):
        the server running the command ends its whole tree, and says who asked. The person's Stop
        after an agent's is said as the person's."""
        with self._write() as db:
            cursor = db.execute(
                f"UPDATE commands SET stop_requested_at = ?, stop_requested_by = ? WHERE id = ? "
                f"AND status IN ({ACTIVE_MARKS}) AND stop_requested_at IS NULL",
                (time.time(), by, command_id, *ACTIVE_STATUSES),
            )
            if cursor.rowcount == 0 and by is None:
                db.execute(
                    f"UPDATE commands SET stop_requested_by = NULL WHERE id = ? AND status IN ({ACTIVE_MARKS})",
                    (command_id, *ACTIVE_STATUSES),
                )
        return cursor.rowcount == 1

    def stop_requests(self, command_ids: Sequence[int]) -> set[int]:
        if not command_ids:
            return set()
        marks = placeholders(len(command_ids))
        rows = self._db.execute(
            f"SELECT id FROM commands WHERE id IN ({marks}) AND stop_requested_at IS NOT NULL",
            tuple(command_ids),
        ).fetchall()
        return {r["id"] for r in rows}

    def stops_by_agents(self, command_ids: Sequence[int]) -> set[int]:
        """Of `command_ids`, those another agent asked to stop (command_stop), not the person."""
        if not command_ids:
            return set()
        marks = placeholders(len(command_ids))
        rows = self._db.execute(
            f"SELECT id FROM commands WHERE id IN ({marks}) AND stop_requested_at IS NOT NULL "
            "AND stop_requested_by IS NOT NULL",
            tuple(command_ids),
        ).fetchall()
        return {r["id"] for r in rows}

    def get_command(self, command_id: int) -> CommandRecord | None:
        row = self._db.execute(f"SELECT {COMMAND_COLUMNS} FROM commands WHERE id = ?", (command_id,)).fetchone()
        return None if row is None else CommandRecord.from_row(row)

    def recent_commands(
        self,
        *,
        limit: int = 20,
        before_id: int | None = None,
        after_id: int | None = None,
        text: str | None = None,
        statuses: Sequence[str] | None = None,
    ) -> list[CommandRecord]:
        """Newest first; `before_id` pages back into history, `after_id` fetches what is new."""
        clauses: list[str] = []
        params: list[Any] = []
        if before_id is not None:
            clauses.append("id < ?")
            params.append(before_id)
        if after_id is not None:
            clauses.append("id > ?")
            params.append(after_id)
        if text:
            clauses.append("(instr(lower(command), lower(?)) > 0 OR instr(lower(coalesce(cwd, '')), lower(?)) > 0)")
            params.extend([text, text])
        if statuses:
            clauses.append(f"status IN ({placeholders(len(statuses))})")
            params.extend(statuses)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._db.execute(
            f"SELECT {COMMAND_COLUMNS} FROM commands {where} ORDER BY id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [CommandRecord.from_row(r) for r in rows]

    def commands_by_id(self, command_ids: Sequence[int]) -> list[CommandRecord]:
        if not command_ids:
            return []
        marks = placeholders(len(command_ids))
        rows = self._db.execute(
            f"SELECT {COMMAND_COLUMNS} FROM commands WHERE id IN ({marks}) ORDER BY id DESC", tuple(command_ids)
        ).fetchall()
        return [CommandRecord.from_row(r) for r in rows]

    def active_commands(self) -> list[CommandRecord]:
        rows = self._db.execute(
            f"SELECT {COMMAND_COLUMNS} FROM commands WHERE status IN ({ACTIVE_MARKS}) ORDER BY id DESC", ACTIVE_STATUSES
        ).fetchall()
        return [CommandRecord.from_row(r) for r in rows]

    def count_commands(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM commands").fetchone()[0]

    def clear_history(self) -> int:
        """Delete finished rows (never a running or waiting one, whose server still updates it), and
        the files that kept their whole output: cleared, a command's output is nowhere to be read."""
        with self._write() as db:
            last = _last_id(db)
            finished = {
                row[0]
                for row in db.execute(f"SELECT id FROM commands WHERE status NOT IN ({ACTIVE_MARKS})", ACTIVE_STATUSES)
            }
            cursor = db.execute(f"DELETE FROM commands WHERE status NOT IN ({ACTIVE_MARKS})", ACTIVE_STATUSES)
            if _last_id(db) < last:  # the ids of the rows deleted are never given again
                _raise_floor(db, last)
        # Here, not at the top: the journal is read by processes that never run a command.
        from app.core.execution.output_files import remove_outputs_of

        remove_outputs_of(self.paths.outputs, finished)
        return cursor.rowcount

    # -- retention --------------------------------------------------------------------------

    def apply_retention(
        self,
        *,
        max_age_days: float = retention.DEFAULT_RETENTION_DAYS,
        max_commands: int = retention.DEFAULT_MAX_COMMANDS,
        max_bytes: int = retention.DEFAULT_MAX_BYTES,
        now: float | None = None,
    ) -> int:
        """Forget old history so the journal never grows without bound; returns rows deleted."""
        with self._write() as db:
            last = _last_id(db)
            deleted = retention.forget_old(
                db, max_age_days=max_age_days, max_commands=max_commands, max_bytes=max_bytes, now=now
            )
            if deleted and _last_id(db) < last:  # the newest rows went too: their ids are not given again
                _raise_floor(db, last)
            return deleted


MAX_FLOOR = 1 << 62  # far above any id a journal gives, far below SQLite's largest integer


def _floor(db: Any) -> int:
    """The highest id given before the rows were cleared or the file renewed (0: none); read as
    SQL reads it, so that a value another program wrote there is a number or nothing."""
    found = db.execute(  # a value no id can exceed (SQLite's largest) is none either
        "SELECT CASE WHEN CAST(value AS INTEGER) BETWEEN 0 AND ? THEN CAST(value AS INTEGER) ELSE 0 END "
        "FROM settings WHERE key = ?",
        (MAX_FLOOR, settings.COMMAND_ID_FLOOR),
    ).fetchone()
    return 0 if found is None else int(found[0])


def ids_given(db: Any) -> int:
    """The highest id a journal's connection shows given: its rows' or its floor's."""
    return max(_last_id(db), _floor(db))


def ids_given_in(moved: Path, known: int | None = None) -> int:
    """The highest command id a journal moved aside for damage gave, as far as it can be read, or as
    `known` (what a connection to it still read) says; when neither can tell, the clock's
    milliseconds, which no journal's ids reach. A new journal goes on above it, so that no id a
    model, a server or an output file still holds is given again (left by the fifteenth sitting: a
    journal damaged at the tray's start gave ids from 1 again)."""
    try:
        db = opening.connect_read_only(moved)
        try:
            highest = ids_given(db)
        finally:
            db.close()
    except (sqlite3.Error, OSError):
        highest = -1
    if 0 <= highest <= MAX_FLOOR:
        return max(highest, known or 0)
    return known if known is not None else int(time.time() * 1000)


def _last_id(db: Any) -> int:
    return int(db.execute("SELECT coalesce(max(id), 0) FROM commands").fetchone()[0])


def _raise_floor(db: Any, last: int) -> None:
    db.execute(
        "INSERT INTO settings(key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = "
        "CAST(max(CAST(settings.value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT), "
        "updated_at = excluded.updated_at",
        (settings.COMMAND_ID_FLOOR, json.dumps(last), time.time()),
    )
