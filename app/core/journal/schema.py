"""The journal's tables: the migrations that build them, version by version, and what was added
beside them without a new version. The journal (store.py) applies them; journal.migration builds an
empty journal of this version from them to import an old history into."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from app.core.data_folder import NewerJournalError

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
    # Who asked a command to stop when it was not the person: messages.AGENT_STOP_BY (another agent's
    # command_stop); NULL: the person's Stop (and every Stop an older version wrote).
    ("commands", "stop_requested_by", "TEXT"),
)

COMMAND_COLUMNS = (
    "id, server_id, server_pid, client_name, client_version, tool, command, cwd, env_keys, timeout_ms, "
    "tier, status, reason, exit_code, timed_out, created_at, started_at, ended_at, duration_ms, "
    "stdout_bytes, stderr_bytes, stdout_preview, stderr_preview, stop_requested_at, confirmation_id, "
    "decision, decided_by, decided_at, hold_expires_at, allowed_by_rule"
)


def needs_migration(db: sqlite3.Connection) -> bool:
    return db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION


def migrate(db: sqlite3.Connection, path: Path) -> None:
    """Take the file to this version, inside the caller's write transaction; a newer file is refused."""
    current = db.execute("PRAGMA user_version").fetchone()[0]
    if current > SCHEMA_VERSION:
        # A DataFolderError: every entry point says it in words, and `serve` answers each call with it.
        raise NewerJournalError(path, current, SCHEMA_VERSION)
    for version in range(current, SCHEMA_VERSION):
        for statement in MIGRATIONS[version].split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {version + 1}")


def missing_parts(db: sqlite3.Connection) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The added tables (their CREATE statements) and columns that this file lacks."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    columns = [
        (table, column, kind)
        for table, column, kind in ADDED_COLUMNS
        if column not in {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
    ]
    return [sql for name, sql in ADDED_TABLES if name not in tables], columns


def add_parts(db: sqlite3.Connection, tables: list[str], columns: list[tuple[str, str, str]]) -> None:
    """Create what `missing_parts` found, inside the caller's write transaction."""
    for sql in tables:
        db.execute(sql)
    for table, column, kind in columns:
        db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
