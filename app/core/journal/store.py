"""The activity journal: the record of every command, one SQLite file, and its reads and writes.

While a tray runs it writes the rows its servers send and the user's decisions; the log window
and the CLI read (docs/ARCHITECTURE.md, "Who writes what"). SQLite in WAL mode lets writers and
readers work at once; each write is one short transaction. All of the app's SQL is in this folder:
the tables (schema.py), opening and repairing the file (opening.py), the values (records.py),
retention (retention.py) and the old Windows folder's move (migration.py).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from app.core import data_folder, liveness, settings
from app.core.data_folder import Replacement
from app.core.journal import opening, pause_file, retention, schema
from app.core.journal.opening import damage_on_disk  # noqa: F401 - re-exported for the hub
from app.core.journal.records import (  # re-exported: callers import the records from the store
    ACTIVE_MARKS,
    ACTIVE_STATUSES,
    REFUSED_ENV_KEYS_KEPT,
    REFUSED_TEXT_KEEP_CHARS,  # noqa: F401 - re-exported
    CommandRecord,
    Outcome,
    ServerRecord,
    Status,
    bounded,
    placeholders,
    preview,
    storable,
)
from app.core.journal.schema import COMMAND_COLUMNS, SCHEMA_VERSION  # noqa: F401 - SCHEMA_VERSION re-exported
from app.core.messages import HOLD_EXPIRED_REASON, SERVER_CRASHED_REASON, SERVER_EXITED_REASON
from app.core.paths import PRIVATE_FILE_MODE, AppPaths
from app.core.policy.rules import SESSION_SCOPE, Rule

log = logging.getLogger(__name__)

PAUSED_SETTING = settings.PAUSED  # kept in the settings table and in the pause file (journal/pause_file)
JOURNAL_REPLACED_SETTING = settings.JOURNAL_REPLACED
WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024  # the WAL is cut back to this after a checkpoint


def _row_id(cursor: sqlite3.Cursor) -> int:
    """The id of the row an INSERT just made (never None after one)."""
    assert cursor.lastrowid is not None
    return cursor.lastrowid


class Journal:
    """One connection to the journal. Cheap to open; open one per process (or per thread)."""

    def __init__(
        self,
        paths: AppPaths,
        *,
        check_same_thread: bool = True,
        busy_timeout_s: float = opening.BUSY_TIMEOUT_S,
        read_only: bool = False,
    ) -> None:
        """Open the journal; a damaged one is moved aside for a new one (`self.replaced` says so),
        and a data folder that cannot hold it raises DataFolderError with the reason in words.
        `read_only` opens it only to read, changing nothing on disk (opening.connect_read_only)."""
        self.paths = paths
        self.read_only = read_only
        self._busy_timeout_s = busy_timeout_s
        self._check_same_thread = check_same_thread
        self.path = paths.journal
        self.replaced: Replacement | None = None
        try:
            if read_only:
                self._db = opening.connect_read_only(self.path, check_same_thread=check_same_thread)
                return
            data_folder.ensure(paths)
            self._connect(check_same_thread)
        except OSError as exc:
            raise data_folder.explain_os_error(paths.data_dir, exc) or exc from None
        except sqlite3.Error as exc:
            raise data_folder.explain_sqlite_error(paths.data_dir, exc) or exc from None
        if self.replaced is not None:
            self._tell_replaced(self.replaced)
        with suppress(OSError):  # a read-only folder: reading works, and a pause says why it cannot be set
            pause_file.ensure(paths.pause_file, bool(self._stored_setting(PAUSED_SETTING, False)))

    def _connect(self, check_same_thread: bool) -> None:
        damage = opening.damage_before_open(self.path)
        if damage:
            self._replace(damage)
        if not self.path.exists():
            from app.core.journal import migration  # Windows: the folder an older version used, once

            migration.migrate_if_needed(self.paths)
        if not self.path.exists():
            opening.build_whole(self.path)
        self._db = self._open_connection(check_same_thread)
        try:
            self._prepare()
            damage = opening.truncation(self._db, self.path)
            if damage:
                raise sqlite3.DatabaseError(damage)
        except sqlite3.DatabaseError as exc:
            if not data_folder.is_corrupt(exc) and not str(exc).startswith(opening.TRUNCATED):
                self._db.close()
                raise
            self._db.close()
            self._replace(str(exc))
            opening.build_whole(self.path)
            self._db = self._open_connection(check_same_thread)
            self._prepare()

    def _open_connection(self, check_same_thread: bool) -> sqlite3.Connection:
        if os.name == "posix":
            # chmod, never open+close: closing any descriptor of the database drops every POSIX lock
            # this process holds on it, including those of its other open connections; another
            # process then thinks it closes the last connection and deletes the WAL under them.
            os.chmod(self.path, PRIVATE_FILE_MODE)
        db = sqlite3.connect(
            self.path,
            timeout=self._busy_timeout_s,
            isolation_level=None,  # we open transactions ourselves, short and explicit
            check_same_thread=check_same_thread,
        )
        db.row_factory = sqlite3.Row
        return db

    def _prepare(self) -> None:
        opening.retry_while_locked(lambda: self._db.execute("PRAGMA journal_mode=WAL"))
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT_BYTES}")
        self._db.execute("PRAGMA foreign_keys=ON")
        opening.retry_while_locked(self._migrate)
        opening.retry_while_locked(self._add_missing)
        for suffix in ("-wal", "-shm"):
            sidecar = Path(f"{self.path}{suffix}")
            if sidecar.exists() and os.name == "posix":
                os.chmod(sidecar, 0o600)

    def _replace(self, reason: str) -> None:
        """Move the damaged journal aside, once, whoever notices first (under a lock, looking again)."""
        lock = liveness.try_hold(self.paths.locks_dir / "journal-repair.lock", patience_s=opening.BUSY_TIMEOUT_S)
        try:
            if self.path.exists() and opening.still_damaged(self.path):
                self.replaced = data_folder.move_aside(self.path, reason)
        finally:
            if lock is not None:
                lock.release()

    def _tell_replaced(self, replaced: Replacement) -> None:
        """The user hears of it: on stderr now (the CLI, serve's log in Claude), and from the tray
        (the supervisor reads the setting and notifies once)."""
        log.info("%s", replaced.message)
        if sys.stderr is not None:
            print(f"cowork-terminal: {replaced.for_person()}", file=sys.stderr, flush=True)
        with suppress(data_folder.DataFolderError):
            self.set_setting(JOURNAL_REPLACED_SETTING, dataclasses.asdict(replaced))

    def reopen(self) -> None:
        """Open the file at the journal's path again, in this same object: it was damaged under this
        connection (then it is moved aside for a new one, once, whoever notices first) or replaced."""
        with suppress(sqlite3.Error):
            self._db.close()
        self.replaced = None
        try:
            self._connect(self._check_same_thread)
        except OSError as exc:
            raise data_folder.explain_os_error(self.paths.data_dir, exc) or exc from None
        except sqlite3.Error as exc:
            raise data_folder.explain_sqlite_error(self.paths.data_dir, exc) or exc from None
        if self.replaced is not None:
            self._tell_replaced(self.replaced)

    @classmethod
    def open(cls, paths: AppPaths | None = None, **kwargs: Any) -> Journal:
        """Open the journal and mark commands whose server died as interrupted (unless a tray runs:
        then the tray alone writes the journal, and it does that itself)."""
        journal = cls(paths or AppPaths.from_environment(), **kwargs)
        if not journal.read_only and not liveness.is_held(journal.paths.tray_lock):
            journal.recover_dead_servers()
        return journal

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ---------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction. A full disk or a read-only folder raises DataFolderError,
        whose text says so (SQLite's own words name neither the folder nor what to do)."""
        try:
            # BEGIN IMMEDIATE takes the write lock up front, so two servers never deadlock upgrading.
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                with suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            problem = data_folder.explain_sqlite_error(self.paths.data_dir, exc)
            if problem is None:
                raise
            raise problem from exc

    def _migrate(self) -> None:
        if not schema.needs_migration(self._db):
            return  # the usual case: no write lock for it
        with self._write() as db:  # read again under the lock: another process may have migrated
            schema.migrate(db, self.path)

    def _add_missing(self) -> None:
        """Create the added tables and columns that this file lacks (schema.ADDED_TABLES)."""
        if schema.missing_parts(self._db) == ([], []):
            return  # the usual case: no write lock for it
        with self._write() as db:  # look again under the lock: another process may have added them
            schema.add_parts(db, *schema.missing_parts(db))

    def schema_version(self) -> int:
        return self._db.execute("PRAGMA user_version").fetchone()[0]

    def data_version(self) -> int:
        """Changes whenever another connection commits, or the pause file is written (a pause on a
        full disk lives only there): a cheap 'did anything happen?' check."""
        return hash((self.others_commits(), pause_file.stamp(self.paths.pause_file)))

    def others_commits(self) -> int:
        """SQLite's `PRAGMA data_version`: it moves when another connection commits, never for this
        connection's own writes (so a foreign write is seen whatever this connection writes after it)."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def size_bytes(self) -> int:
        return sum(
            Path(f"{self.path}{suffix}").stat().st_size
            for suffix in ("", "-wal")
            if Path(f"{self.path}{suffix}").exists()
        )

    # -- settings ---------------------------------------------------------------------------

    def get_setting(self, key: str, default: Any = None) -> Any:
        """A setting's value. `paused` has two homes (see `is_paused`): reading it reads both."""
        if key == PAUSED_SETTING:
            return self.is_paused()
        return self._stored_setting(key, default)

    def _stored_setting(self, key: str, default: Any = None) -> Any:
        row = self._db.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row["value"])

    def set_setting(self, key: str, value: Any) -> None:
        """Store a setting. `paused` goes through `set_paused`, so that whoever writes the switch
        (the tray's hub writes all its settings in one loop) keeps both of its homes in step."""
        if key == PAUSED_SETTING:
            self.set_paused(bool(value))
            return
        self._store_setting(key, value)

    def _store_setting(self, key: str, value: Any) -> None:
        with self._write() as db:
            db.execute(
                "INSERT INTO settings(key, value, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (key, json.dumps(value), time.time()),
            )

    def is_paused(self) -> bool:
        """Paused when either copy says so: the pause file (which can be set on a full disk) or the
        setting (which a process from before the file existed may have set). Pausing needs one
        of them; resuming must clear both, so on a full disk the pause holds until there is room."""
        return pause_file.read(self.paths.pause_file) is True or bool(self._stored_setting(PAUSED_SETTING, False))

    def set_paused(self, paused: bool) -> None:
        """The user's pause switch. Servers notice within their poll interval and stop what runs.

        Pausing writes the file first (it needs no free space), then the setting when the disk
        allows. Resuming clears the setting first, then the file; either failing leaves it paused."""
        if paused:
            self._write_pause_file(True)
            try:
                self._store_setting(PAUSED_SETTING, True)
            except data_folder.DataFolderError as problem:
                if problem.kind != data_folder.FULL:
                    raise
            return
        self._store_setting(PAUSED_SETTING, False)
        self._write_pause_file(False)

    def _write_pause_file(self, paused: bool) -> None:
        try:
            pause_file.write(self.paths.pause_file, paused)
        except OSError as exc:
            raise data_folder.explain_os_error(self.paths.data_dir, exc) or exc from None

    # -- servers ----------------------------------------------------------------------------

    def register_server(self, pid: int, *, headless: bool, lock_key: str | None) -> int:
        """Register a live server. It takes its lock (`paths.server_lock(lock_key)`) before this, so
        no other process can ever see its row without the lock held and call it dead."""
        now = time.time()
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO servers(pid, headless, lock_key, started_at, last_seen) VALUES (?, ?, ?, ?, ?)",
                (pid, int(headless), lock_key, now, now),
            )
        return _row_id(cursor)

    def set_server_client(self, server_id: int, name: str | None, version: str | None) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE servers SET client_name = ?, client_version = ?, last_seen = ? WHERE id = ?",
                (name, version, time.time(), server_id),
            )

    def end_server(self, server_id: int, state: str = "exited") -> None:
        """A server leaves: whatever it still ran or held can no longer finish, so the rows say so."""
        now = time.time()
        with self._write() as db:
            db.execute(
                "UPDATE servers SET state = ?, ended_at = ? WHERE id = ? AND state = 'live'",
                (state, now, server_id),
            )
            db.execute(
                "UPDATE commands SET status = ?, reason = ?, ended_at = ? "
                f"WHERE server_id = ? AND status IN ({ACTIVE_MARKS})",
                (Status.INTERRUPTED.value, SERVER_EXITED_REASON, now, server_id,
                 *ACTIVE_STATUSES),
            )  # fmt: skip

    def live_server_pid(self, server_id: int) -> int | None:
        row = self._db.execute("SELECT pid FROM servers WHERE id = ? AND state = 'live'", (server_id,)).fetchone()
        return None if row is None else int(row["pid"])

    def servers(self, *, live_only: bool = True, limit: int = 50) -> list[ServerRecord]:
        where = "WHERE s.state = 'live'" if live_only else ""
        rows = self._db.execute(
            f"SELECT s.*, (SELECT COUNT(*) FROM commands c WHERE c.server_id = s.id) AS command_count "
            f"FROM servers s {where} ORDER BY s.id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [ServerRecord(**{**dict(r), "headless": bool(r["headless"])}) for r in rows]

    def recover_dead_servers(self) -> list[int]:
        """Mark servers whose process is gone as crashed and their active commands as interrupted.

        A server that exits normally marks itself exited; one still 'live' in the journal whose
        lock nobody holds died without a word (killed, crashed, machine lost power).
        """
        # Only what the probe needs: this runs on every tray poll.
        keys = dict(self._db.execute("SELECT id, lock_key FROM servers WHERE state = 'live'").fetchall())
        dead = [i for i, key in keys.items() if key is None or not liveness.is_held(self.paths.server_lock(key))]
        if not dead:
            return []
        now = time.time()
        marks = placeholders(len(dead))
        with self._write() as db:
            db.execute(
                f"UPDATE servers SET state = 'crashed', ended_at = ? WHERE id IN ({marks}) AND state = 'live'",
                (now, *dead),
            )
            db.execute(
                f"UPDATE commands SET status = ?, reason = ?, ended_at = ?, "
                f"duration_ms = CASE WHEN started_at IS NULL THEN NULL ELSE (? - started_at) * 1000 END "
                f"WHERE server_id IN ({marks}) AND status IN ({ACTIVE_MARKS})",
                (
                    Status.INTERRUPTED.value,
                    SERVER_CRASHED_REASON,
                    now,
                    now,
                    *dead,
                    *ACTIVE_STATUSES,
                ),
            )
        for server_id in dead:
            if keys[server_id]:
                self.paths.server_lock(keys[server_id]).unlink(missing_ok=True)
        return dead

    # -- commands ---------------------------------------------------------------------------

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
    ) -> int:
        """Write the row before anything runs, so even a crash mid-command leaves a record."""
        now = time.time()
        keys = sorted(storable(k) for k in env_keys)
        command, cwd = storable(command), None if cwd is None else storable(cwd)
        if status is Status.REFUSED:
            command, cwd = bounded(command), None if cwd is None else bounded(cwd)
            keys = [bounded(k, 200) for k in keys[:REFUSED_ENV_KEYS_KEPT]]
            reason = None if reason is None else bounded(storable(reason))
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO commands(server_id, server_pid, client_name, client_version, tool, command, "
                "cwd, env_keys, timeout_ms, tier, status, reason, created_at, started_at, confirmation_id, "
                "hold_expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
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
        return _row_id(cursor)

    def mark_started(self, command_id: int) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE commands SET status = ?, started_at = ? WHERE id = ?",
                (Status.RUNNING.value, time.time(), command_id),
            )

    def finish_command(self, command_id: int, outcome: Outcome) -> None:
        """Record how a command ended. On a full disk the ending is logged, not raised: the command
        already ran, and its result still reaches the model; the row is closed when the server
        ends, or marked interrupted by the next process if that cannot be written either."""
        try:
            self._finish_command(command_id, outcome)
        except data_folder.DataFolderError as problem:
            log.warning(
                "command #%s ended (%s) but the journal could not record it: %s",
                command_id,
                outcome.status.value,
                problem,
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

    def _finish_command(self, command_id: int, outcome: Outcome) -> None:
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

    # -- approvals: decided by the user through the tray, the log window or the CLI, never the model --

    def decide(self, command_id: int, *, allowed: bool, by: str, rule_id: int | None = None) -> bool:
        """Record the user's answer to a held command; False when it is no longer waiting.
        `rule_id`: the user's rule that answered it (the tray applies rules; see core/policy/rules.py)."""
        now = time.time()
        with self._write() as db:
            cursor = db.execute(
                "UPDATE commands SET decision = ?, decided_by = ?, decided_at = ?, allowed_by_rule = ? "
                "WHERE id = ? AND status = ? AND decision IS NULL AND hold_expires_at > ?",
                (
                    "allowed" if allowed else "denied",
                    by,
                    now,
                    rule_id if allowed else None,
                    command_id,
                    Status.WAITING.value,
                    now,
                ),
            )
        return cursor.rowcount == 1

    # -- the user's rules (core/policy/rules.py): created by a click in the app's own UI only ----------

    def add_rule(self, kind: str, folder: str, scope: str, description: str, session: str | None = None) -> Rule:
        now = time.time()
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO rules(kind, folder, scope, session, description, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (kind, folder, scope, session, description, now),
            )
        return Rule(_row_id(cursor), kind, folder, scope, now, description, session)

    def rules(self) -> list[Rule]:
        """The user's rules in force: every folder rule, and session rules whose server still lives."""
        rows = self._db.execute(
            "SELECT id, kind, folder, scope, created_at, description, session FROM rules WHERE scope != ? "
            "OR session IN (SELECT CAST(id AS TEXT) FROM servers WHERE state = 'live') ORDER BY id",
            (SESSION_SCOPE,),
        ).fetchall()
        return [Rule(*row) for row in rows]

    def remove_rule(self, rule_id: int) -> bool:
        with self._write() as db:
            cursor = db.execute("DELETE FROM rules WHERE id = ?", (rule_id,))
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

    def request_stop(self, command_id: int) -> bool:
        """The user's Stop button: the server running the command ends its whole tree."""
        with self._write() as db:
            cursor = db.execute(
                f"UPDATE commands SET stop_requested_at = ? WHERE id = ? AND status IN ({ACTIVE_MARKS}) "
                "AND stop_requested_at IS NULL",
                (time.time(), command_id, *ACTIVE_STATUSES),
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
        """Delete finished rows (never a running or waiting one, whose server still updates it)."""
        with self._write() as db:
            cursor = db.execute(f"DELETE FROM commands WHERE status NOT IN ({ACTIVE_MARKS})", ACTIVE_STATUSES)
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
            return retention.forget_old(
                db, max_age_days=max_age_days, max_commands=max_commands, max_bytes=max_bytes, now=now
            )
