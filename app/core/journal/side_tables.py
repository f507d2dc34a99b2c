"""The journal's small tables: the settings (with the pause switch's two homes), the servers that
run or ran, and the user's rules."""

from __future__ import annotations

import json
import time
from typing import Any

from app.core import data_folder, liveness, settings
from app.core.journal import pause_file
from app.core.journal.connection import Connection, row_id
from app.core.journal.records import ACTIVE_MARKS, ACTIVE_STATUSES, ServerRecord, Status, client_text, placeholders
from app.core.messages import SERVER_CRASHED_REASON, SERVER_EXITED_REASON
from app.core.policy.rules import SESSION_SCOPE, Rule

PAUSED_SETTING = settings.PAUSED  # kept in the settings table and in the pause file (journal/pause_file)
# How many pauses the journal has seen begin (`pause_count`): kept by the pause's writes alone, in SQL.
PAUSE_COUNT_KEY = settings.PAUSE_COUNT


class SideTables(Connection):
    """Settings, servers and rules: the rows around the commands."""

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
        allows. Resuming clears the setting first, then the file; either failing leaves it paused.
        The setting's change from not paused to paused counts a pause (`pause_count`)."""
        if paused:
            self._write_pause_file(True)
            try:
                self._store_pause(True)
            except data_folder.DataFolderError as problem:
                if problem.kind != data_folder.FULL:
                    raise
            return
        self._store_pause(False)
        self._write_pause_file(False)

    def _store_pause(self, paused: bool) -> None:
        """The pause setting, and in the same transaction the count of pauses when one begins: the
        setting goes from not paused to paused, or a pause the pause file alone held (set on a full
        disk, uncounted then) ends. A command judged before it is never begun after it (red team,
        tenth: a headless server ran commands judged through a pause once it was lifted)."""
        with self._write() as db:
            row = db.execute("SELECT value FROM settings WHERE key = ?", (PAUSED_SETTING,)).fetchone()
            was = row is not None and bool(json.loads(row["value"]))
            begins = paused and not was
            uncounted = not paused and not was and pause_file.read(self.paths.pause_file) is True
            now = time.time()
            db.execute(
                "INSERT INTO settings(key, value, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (PAUSED_SETTING, json.dumps(paused), now),
            )
            if begins or uncounted:
                db.execute(  # a value another program wrote there counts as 0
                    "INSERT INTO settings(key, value, updated_at) VALUES (?, '1', ?) ON CONFLICT(key) DO UPDATE "
                    "SET value = CAST(CAST(settings.value AS INTEGER) + 1 AS TEXT), updated_at = excluded.updated_at",
                    (PAUSE_COUNT_KEY, now),
                )

    def pause_count(self) -> int:
        """How many pauses this journal has seen begin (`_store_pause`); 0 before the first."""
        row = self._db.execute(
            "SELECT CAST(value AS INTEGER) FROM settings WHERE key = ?", (PAUSE_COUNT_KEY,)
        ).fetchone()
        return 0 if row is None else int(row[0])

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
        return row_id(cursor)

    def set_server_client(self, server_id: int, name: str | None, version: str | None) -> None:
        """The client's name and version as it gave them (records.client_text)."""
        name, version = client_text(name), client_text(version)
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

    # -- the user's rules (core/policy/rules.py): created by a click in the app's own UI only ----------

    def add_rule(self, kind: str, folder: str, scope: str, description: str, session: str | None = None) -> Rule:
        now = time.time()
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO rules(kind, folder, scope, session, description, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (kind, folder, scope, session, description, now),
            )
        return Rule(row_id(cursor), kind, folder, scope, now, description, session)

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
