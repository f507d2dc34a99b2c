"""The activity journal: the one shared truth of every process of the app, and the only SQL in it.

Servers write a row before each command starts and update it when it ends; the tray, the log
window and the CLI read it and write the user's decisions (pause, stop, approve) into it. SQLite
in WAL mode lets several servers write while readers read; each write is one short transaction.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import secrets
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from app.core import data_folder, liveness
from app.core.data_folder import Replacement
from app.core.journal import pause_file
from app.core.messages import HOLD_EXPIRED_REASON, SERVER_CRASHED_REASON, SERVER_EXITED_REASON
from app.core.paths import PRIVATE_FILE_MODE, AppPaths, make_private_file
from app.core.policy.rules import SESSION_SCOPE, Rule

log = logging.getLogger(__name__)

BUSY_TIMEOUT_S = 10.0
LOCKED_RETRY_S = 0.02
PREVIEW_HEAD_BYTES = 2048
PREVIEW_TAIL_BYTES = 6144
DEFAULT_RETENTION_DAYS = 30
DEFAULT_MAX_COMMANDS = 100_000
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DAY_S = 86_400.0
PAUSED_SETTING = "paused"  # kept in the settings table and in the pause file (core/pause_file)
JOURNAL_REPLACED_SETTING = "journal.replaced"  # the last damaged journal moved aside (data_folder.Replacement)
TRUNCATED = "the file is shorter than its header says (truncated)"
# A refused command never ran, so its row needs only enough text to recognise it: the whole text
# of a refused 5 MB command would let any model fill the disk (once in the WAL, once in the file).
REFUSED_TEXT_KEEP_CHARS = 4096
REFUSED_ENV_KEYS_KEPT = 50
BOUNDED_NOTE_CHARS = 100  # room for bounded()'s note: text this close to the limit is kept whole
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024  # the WAL is cut back to this after a checkpoint


class Status(str, Enum):
    """Every state a journaled command can be in; the log window gives each its own look."""

    WAITING = "waiting"  # held for the user's approval
    RUNNING = "running"
    FINISHED = "finished"  # exit code 0
    FAILED = "failed"  # non-zero exit code, or it could not be started
    TIMED_OUT = "timed_out"
    KILLED = "killed"  # stopped by the user, by pause, or by the client's cancellation
    REFUSED = "refused"  # never ran: paused, no tray, denied by the user, bad input
    INTERRUPTED = "interrupted"  # its server died while it ran

    @property
    def is_active(self) -> bool:
        return self in (Status.WAITING, Status.RUNNING)


ACTIVE_STATUSES = tuple(s.value for s in Status if s.is_active)


def _marks(count: int) -> str:
    """`?, ?, ...`: the placeholders of an IN list."""
    return ",".join("?" * count)


ACTIVE_MARKS = _marks(len(ACTIVE_STATUSES))

# Each migration takes the schema from version N-1 to N. Never edit one that has shipped: add one.
MIGRATIONS: Sequence[str] = (
    """
    CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at REAL NOT NULL);
    CREATE TABLE servers (
        id INTEGER PRIMARY KEY,
        pid INTEGER NOT NULL,
        client_name TEXT,
        client_version TEXT,
        headless INTEGER NOT NULL DEFAULT 0,
        lock_key TEXT,  -- the server holds locks/server-<lock_key>.lock for as long as it lives
        started_at REAL NOT NULL,
        last_seen REAL NOT NULL,
        ended_at REAL,
        state TEXT NOT NULL DEFAULT 'live'  -- live, exited, crashed
    );
    CREATE TABLE commands (
        id INTEGER PRIMARY KEY,
        server_id INTEGER REFERENCES servers(id),
        server_pid INTEGER,
        client_name TEXT,
        client_version TEXT,
        tool TEXT NOT NULL DEFAULT 'execute_command',
        command TEXT NOT NULL,
        cwd TEXT,
        env_keys TEXT NOT NULL DEFAULT '[]',
        timeout_ms INTEGER,
        tier TEXT,
        status TEXT NOT NULL,
        reason TEXT,
        exit_code INTEGER,
        timed_out INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        started_at REAL,
        ended_at REAL,
        duration_ms REAL,
        stdout_bytes INTEGER,
        stderr_bytes INTEGER,
        stdout_preview TEXT,
        stderr_preview TEXT,
        stop_requested_at REAL,
        confirmation_id TEXT UNIQUE,
        decision TEXT,          -- allowed, denied (by the user only)
        decided_by TEXT,
        decided_at REAL,
        hold_expires_at REAL
    );
    CREATE INDEX commands_status ON commands(status);
    CREATE INDEX commands_server ON commands(server_id);
    CREATE INDEX commands_created ON commands(created_at);
    CREATE TABLE ui_requests (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        created_at REAL NOT NULL,
        handled_at REAL
    );
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

# Added without raising the schema version, so that an older app still opens the file (it refuses a
# newer version): only new tables and nullable columns, each created where it is missing.
ADDED_TABLES: Sequence[tuple[str, str]] = (
    (
        "rules",  # the user's rules against approval fatigue (core/policy/rules.py); made by clicks only
        """CREATE TABLE IF NOT EXISTS rules (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            folder TEXT NOT NULL,
            scope TEXT NOT NULL,
            session TEXT,
            description TEXT NOT NULL,
            created_at REAL NOT NULL
        )""",
    ),
)
ADDED_COLUMNS: Sequence[tuple[str, str, str]] = (
    ("commands", "allowed_by_rule", "INTEGER"),  # the rule that allowed a held command, if one did
)

COMMAND_COLUMNS = (
    "id, server_id, server_pid, client_name, client_version, tool, command, cwd, env_keys, timeout_ms, "
    "tier, status, reason, exit_code, timed_out, created_at, started_at, ended_at, duration_ms, "
    "stdout_bytes, stderr_bytes, stdout_preview, stderr_preview, stop_requested_at, confirmation_id, "
    "decision, decided_by, decided_at, hold_expires_at, allowed_by_rule"
)


@dataclass(frozen=True)
class CommandRecord:
    id: int
    server_id: int | None
    server_pid: int | None
    client_name: str | None
    client_version: str | None
    tool: str
    command: str
    cwd: str | None
    env_keys: list[str]
    timeout_ms: int | None
    tier: str | None
    status: Status
    reason: str | None
    exit_code: int | None
    timed_out: bool
    created_at: float
    started_at: float | None
    ended_at: float | None
    duration_ms: float | None
    stdout_bytes: int | None
    stderr_bytes: int | None
    stdout_preview: str | None
    stderr_preview: str | None
    stop_requested_at: float | None
    confirmation_id: str | None
    decision: str | None
    decided_by: str | None
    decided_at: float | None
    hold_expires_at: float | None
    allowed_by_rule: int | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> CommandRecord:
        values = dict(row)
        values["env_keys"] = json.loads(values["env_keys"] or "[]")
        values["status"] = Status(values["status"])
        values["timed_out"] = bool(values["timed_out"])
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["status"] = self.status.value
        return data


@dataclass(frozen=True)
class ServerRecord:
    id: int
    pid: int
    client_name: str | None
    client_version: str | None
    headless: bool
    lock_key: str | None
    started_at: float
    last_seen: float
    ended_at: float | None
    state: str
    command_count: int = 0

    @property
    def client_label(self) -> str:
        if not self.client_name:
            return "unknown client"
        return f"{self.client_name} {self.client_version}".strip() if self.client_version else self.client_name


@dataclass(frozen=True)
class Outcome:
    """How a command ended, as the executor saw it."""

    status: Status
    exit_code: int | None = None
    timed_out: bool = False
    reason: str | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    duration_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def preview(data: bytes) -> str:
    """A bounded, readable excerpt of one output stream for the journal: its head and its tail."""
    if len(data) <= PREVIEW_HEAD_BYTES + PREVIEW_TAIL_BYTES:
        return data.decode("utf-8", errors="replace")
    dropped = len(data) - PREVIEW_HEAD_BYTES - PREVIEW_TAIL_BYTES
    head = data[:PREVIEW_HEAD_BYTES].decode("utf-8", errors="replace")
    tail = data[-PREVIEW_TAIL_BYTES:].decode("utf-8", errors="replace")
    return f"{head}\n[... {dropped} bytes not kept in the journal ...]\n{tail}"


def storable(text: str) -> str:
    """`text` as SQLite can store it: a lone surrogate (no UTF-8 form) becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return LONE_SURROGATE.sub("\ufffd", text)
    return text


def bounded(text: str, keep_chars: int = REFUSED_TEXT_KEEP_CHARS) -> str:
    """The head of `text`, with a note of its full size when it was longer. Bounding twice keeps the
    first note (a server bounds a refusal before sending it to the tray, whose journal bounds too)."""
    if len(text) <= keep_chars + BOUNDED_NOTE_CHARS:
        return text
    size = len(text.encode("utf-8", "surrogatepass"))
    return f"{text[:keep_chars]}\n[... only the first {keep_chars:,} characters of {size:,} bytes kept ...]"


def _truncation(db: sqlite3.Connection, path: Path) -> str | None:
    """Why the file is shorter than its own header says (truncated), checked without reading every
    page; SQLite finds other damage itself when it reads. None when it is whole."""
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return None  # the WAL may hold pages beyond the end of the file
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    size = path.stat().st_size
    return f"{TRUNCATED} ({size:,} of {pages * page_size:,} bytes)" if size < pages * page_size else None


def damage_on_disk(path: Path) -> str | None:
    """What SQLite says is wrong with the journal as it is on disk now, read through a connection
    of its own (another connection may keep serving its cached pages); None when it reads whole."""
    try:  # mode=rw: a journal deleted meanwhile is not created here
        probe = sqlite3.connect(f"{path.absolute().as_uri()}?mode=rw", uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error:
        return None  # cannot open it at all: a missing or unreadable file is told elsewhere
    try:
        probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
        probe.execute("SELECT count(*) FROM settings").fetchone()
        return _truncation(probe, path)
    except sqlite3.DatabaseError as exc:
        return str(exc) if data_folder.is_corrupt(exc) else None
    finally:
        probe.close()


def _retry_while_locked(step: Callable[[], object]) -> None:
    """Run a set-up step that SQLite does not wait for: switching a new file to WAL, or its first
    migration, fails at once with "database is locked" while another process does the same (two
    servers starting together on a fresh install)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(LOCKED_RETRY_S)


class Journal:
    """One connection to the journal. Cheap to open; open one per process (or per thread)."""

    def __init__(
        self, paths: AppPaths, *, check_same_thread: bool = True, busy_timeout_s: float = BUSY_TIMEOUT_S
    ) -> None:
        """Open the journal; a damaged one is moved aside for a new one (`self.replaced` says so),
        and a data folder that cannot hold it raises DataFolderError with the reason in words."""
        self.paths = paths
        self._busy_timeout_s = busy_timeout_s
        self._check_same_thread = check_same_thread
        self.path = paths.journal
        self.replaced: Replacement | None = None
        try:
            paths.ensure()
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
        damage = self._damage_before_open()
        if damage:
            self._replace(damage)
        if not self.path.exists():
            from app.core.journal import migration  # Windows: the folder an older version used, once

            migration.migrate_if_needed(self.paths)
        if not self.path.exists():
            self._create()
        self._db = self._open_connection(check_same_thread)
        try:
            self._prepare()
            damage = _truncation(self._db, self.path)
            if damage:
                raise sqlite3.DatabaseError(damage)
        except sqlite3.DatabaseError as exc:
            if not data_folder.is_corrupt(exc) and not str(exc).startswith(TRUNCATED):
                self._db.close()
                raise
            self._db.close()
            self._replace(str(exc))
            self._create()
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
        _retry_while_locked(lambda: self._db.execute("PRAGMA journal_mode=WAL"))
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT_BYTES}")
        self._db.execute("PRAGMA foreign_keys=ON")
        _retry_while_locked(self._migrate)
        _retry_while_locked(self._add_missing)
        for suffix in ("-wal", "-shm"):
            sidecar = Path(f"{self.path}{suffix}")
            if sidecar.exists() and os.name == "posix":
                os.chmod(sidecar, 0o600)

    def _damage_before_open(self) -> str | None:
        """An emptied journal: SQLite would silently take it for a new one. A journal is never
        empty otherwise, since `_create` builds it whole under another name first."""
        try:
            empty = self.path.stat().st_size == 0
        except FileNotFoundError:
            return None
        return "emptied to 0 bytes" if empty and not Path(f"{self.path}-wal").exists() else None

    def _replace(self, reason: str) -> None:
        """Move the damaged journal aside, once, whoever notices first (under a lock, looking again)."""
        lock = liveness.try_hold(self.paths.locks_dir / "journal-repair.lock", patience_s=BUSY_TIMEOUT_S)
        try:
            if self.path.exists() and self._still_damaged():
                self.replaced = data_folder.move_aside(self.path, reason)
        finally:
            if lock is not None:
                lock.release()

    def _still_damaged(self) -> bool:
        """Another process may have replaced it already: look at the file as it is now."""
        if self._damage_before_open():
            return True
        probe = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
        try:
            probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return _truncation(probe, self.path) is not None
        except sqlite3.DatabaseError as exc:
            return data_folder.is_corrupt(exc)
        finally:
            probe.close()

    def _create(self) -> None:
        """Build a new journal whole under a private name, then link it into place: nobody ever
        sees an empty journal (which is how an emptied one is told apart), and a second process
        creating one at the same moment keeps the first one's."""
        fresh = self.path.with_name(f"{self.path.stem}.new-{os.getpid()}-{secrets.token_hex(4)}{self.path.suffix}")
        make_private_file(fresh)
        try:
            self._db = sqlite3.connect(fresh, isolation_level=None)
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._migrate()
            finally:
                self._db.close()
            with suppress(FileExistsError):
                os.link(fresh, self.path)
        finally:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{fresh}{suffix}").unlink(missing_ok=True)

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
        if not liveness.is_held(journal.paths.tray_lock):
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
        if self._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return  # the usual case: no write lock for it
        with self._write() as db:  # read again under the lock: another process may have migrated
            current = db.execute("PRAGMA user_version").fetchone()[0]
            if current > SCHEMA_VERSION:
                raise RuntimeError(
                    f"The journal at {self.path} was written by a newer Cowork Terminal "
                    f"(schema {current}, this one knows {SCHEMA_VERSION}). Update the app."
                )
            for version in range(current, SCHEMA_VERSION):
                for statement in MIGRATIONS[version].split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {version + 1}")

    def _add_missing(self) -> None:
        """Create the added tables and columns that this file lacks (see ADDED_TABLES)."""

        def missing(db: sqlite3.Connection) -> tuple[list[str], list[tuple[str, str, str]]]:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            columns = [
                (table, column, kind)
                for table, column, kind in ADDED_COLUMNS
                if column not in {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
            ]
            return [sql for name, sql in ADDED_TABLES if name not in tables], columns

        if missing(self._db) == ([], []):
            return  # the usual case: no write lock for it
        with self._write() as db:  # look again under the lock: another process may have added them
            tables, columns = missing(db)
            for sql in tables:
                db.execute(sql)
            for table, column, kind in columns:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    def schema_version(self) -> int:
        return self._db.execute("PRAGMA user_version").fetchone()[0]

    def data_version(self) -> int:
        """Changes whenever another connection commits, or the pause file is written (a pause on a
        full disk lives only there): a cheap 'did anything happen?' check."""
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        return hash((version, pause_file.stamp(self.paths.pause_file)))

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
        return int(cursor.lastrowid)

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
        marks = _marks(len(dead))
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
        return int(cursor.lastrowid)

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
        return Rule(int(cursor.lastrowid), kind, folder, scope, now, description, session)

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
        marks = _marks(len(command_ids))
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
            clauses.append(f"status IN ({_marks(len(statuses))})")
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
        marks = _marks(len(command_ids))
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
        max_age_days: float = DEFAULT_RETENTION_DAYS,
        max_commands: int = DEFAULT_MAX_COMMANDS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        now: float | None = None,
    ) -> int:
        """Forget old history so the journal never grows without bound; returns rows deleted.

        Deleted pages are reused by later writes, so the file stops growing at about the cap.
        """
        cutoff = (now or time.time()) - max_age_days * DAY_S
        marks = ACTIVE_MARKS  # the commands still running or waiting are never deleted
        deleted = 0
        with self._write() as db:
            deleted += db.execute(
                f"DELETE FROM commands WHERE created_at < ? AND status NOT IN ({marks})", (cutoff, *ACTIVE_STATUSES)
            ).rowcount
            # Counting reads only an index; the OFFSET walk reads every row, so it runs only when due.
            if db.execute("SELECT COUNT(*) FROM commands").fetchone()[0] > max_commands:
                deleted += db.execute(
                    f"DELETE FROM commands WHERE status NOT IN ({marks}) AND id <= "
                    f"(SELECT id FROM commands ORDER BY id DESC LIMIT 1 OFFSET ?)",
                    (*ACTIVE_STATUSES, max_commands),
                ).rowcount
            used = db.execute(
                "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), "
                "pragma_freelist_count(), pragma_page_size()"
            ).fetchone()[0]
            if used > max_bytes:
                # Drop the oldest fifth of the rows; the next run trims again if still too big.
                deleted += db.execute(
                    f"DELETE FROM commands WHERE status NOT IN ({marks}) AND id < "
                    f"(SELECT id FROM commands ORDER BY id LIMIT 1 OFFSET "
                    f"(SELECT COUNT(*) / 5 FROM commands))",
                    ACTIVE_STATUSES,
                ).rowcount
            db.execute(
                "DELETE FROM servers WHERE state != 'live' AND ended_at < ? "
                "AND id NOT IN (SELECT DISTINCT server_id FROM commands WHERE server_id IS NOT NULL)",
                (cutoff,),
            )
            db.execute("DELETE FROM ui_requests WHERE created_at < ?", (cutoff,))  # no longer written
        return deleted
