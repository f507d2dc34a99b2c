"""Moving the Windows data folder out of AppData: the old journal and logs come along once.

Up to 0.1 the Windows data lived in `%LOCALAPPDATA%\\cowork-terminal`; it now lives in
`%USERPROFILE%\\.cowork-terminal` (app/core/paths.py says why). The first process that opens a
missing journal at the new place copies the old one with SQLite's backup API, keeping only the
settings that are stricter than the defaults (any command the agent ran could write the old file,
so nothing there may loosen control), and imports the history only from the copy that Claude's
MSIX package may have made in its LocalCache. The old folders are left as they are.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import sqlite3
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core import data_folder, liveness, settings
from app.core.i18n import _
from app.core.journal.schema import MIGRATIONS  # an empty journal of this version to import into
from app.core.messages import DATA_MOVED_REASON
from app.core.paths import (  # the old folders are locations: paths finds them, this module moves them
    AppPaths,
    LegacySources,
    legacy_sources,
)
from app.core.policy.approval import ApprovalMode

LEGACY_LOG_DIR_NAME = "Logs"  # platformdirs' Windows log folder inside the data folder
NOTICE_SETTING = settings.DATA_MOVED_NOTICE
MIGRATION_LOCK = "migrate.lock"
INTERRUPTED_REASON = DATA_MOVED_REASON

logger = logging.getLogger(__name__)


@dataclass
class MigrationReport:
    copied_journal: bool = False
    kept_settings: dict[str, Any] = field(default_factory=dict)
    dropped_settings: list[str] = field(default_factory=list)
    imported_commands: int = 0
    copied_logs: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def notice(self) -> str:
        """What the user reads once: what came along and what did not."""
        parts = [_("Cowork Terminal moved its data to a new folder.")]
        if self.dropped_settings:
            parts.append(_("Settings that allowed more than the defaults were reset; set them again in the app."))
        parts.extend(self.problems)
        return " ".join(parts)


def stricter_settings(old: Mapping[str, Any]) -> dict[str, Any]:
    """Of an old journal's settings, only those that control more than the defaults do.

    Pause on, asking before every command, a shorter approval window, fewer tools. Everything else
    (looser values, and keys this version does not judge) is dropped: it may have been written by a
    command the agent ran.
    """
    kept: dict[str, Any] = {}
    if old.get(settings.PAUSED) is True:
        kept[settings.PAUSED] = True
    if old.get(settings.APPROVAL_MODE) == ApprovalMode.ALL.value:
        kept[settings.APPROVAL_MODE] = ApprovalMode.ALL.value
    window = old.get(settings.APPROVAL_WINDOW_S)
    if (
        isinstance(window, (int, float))
        and not isinstance(window, bool)
        and 1 <= window < settings.DEFAULT_APPROVAL_WINDOW_S
    ):
        kept[settings.APPROVAL_WINDOW_S] = float(window)
    if old.get(settings.TOOLS) == settings.EXECUTE_ONLY:
        kept[settings.TOOLS] = settings.EXECUTE_ONLY
    return kept


def migrate_if_needed(paths: AppPaths) -> MigrationReport | None:
    """Called before a missing journal is created: import the old Windows folder, once."""
    import sys

    sources = legacy_sources(sys.platform, os.environ, str(Path.home()))
    if sources is None:
        return None
    return migrate(paths, LegacySources(local=Path(sources.local), msix_local=Path(sources.msix_local)))


def migrate(paths: AppPaths, sources: LegacySources) -> MigrationReport | None:
    """Copy the old journal and logs into `paths` if its journal does not exist yet; None if nothing to do."""
    old_journal = Path(sources.local) / paths.journal.name
    msix_journal = Path(sources.msix_local) / paths.journal.name
    if paths.journal.exists() or not (old_journal.is_file() or msix_journal.is_file()):
        return None
    data_folder.ensure(paths)
    # As long as another process moves the folder: its lock goes when it is done or dies.
    lock = liveness.try_hold(paths.locks_dir / MIGRATION_LOCK, patience_s=math.inf)
    try:
        if paths.journal.exists():  # another process moved it while we waited
            return None
        report = MigrationReport()
        staging = paths.data_dir / f".{paths.journal.name}.moving"
        staging.unlink(missing_ok=True)
        # Each copy on its own: a damaged MSIX copy must not take the old journal's rows and pause with it.
        for step, source in ((_copy_journal, old_journal), (_import_history, msix_journal)):
            if not source.is_file():
                continue
            try:
                step(source, staging, report)
            except sqlite3.DatabaseError as exc:
                if step is _copy_journal:
                    unreadable = _("The old activity log could not be read ({error}); it starts empty.")
                else:
                    unreadable = _("The commands run from Claude's Store version could not be read ({error}).")
                report.problems.append(unreadable.format(error=exc))
                logger.warning("could not move the old journal from %s", source, exc_info=True)
                if step is _copy_journal:  # its copy may be half made; the import's is rolled back
                    staging.unlink(missing_ok=True)
        if report.problems and not staging.exists():
            _create(staging)  # a journal that tells the user what could not come along
        if staging.exists():
            with sqlite3.connect(staging) as db:
                _set_notice(db, report.notice)
            db.close()
            os.replace(staging, paths.journal)
        report.copied_logs = _copy_logs(Path(sources.local) / LEGACY_LOG_DIR_NAME, paths.log_dir)
        logger.info("moved the data from %s: %s", sources.local, report)
        return report
    finally:
        if lock is not None:  # never None: it waits as long as it takes
            lock.release()


def _copy_journal(source: Path, target: Path, report: MigrationReport) -> None:
    old = sqlite3.connect(source, timeout=10)
    new = sqlite3.connect(target)
    try:
        old.backup(new)  # consistent even while an old server still writes it, WAL included
    finally:
        old.close()
    try:
        settings = {key: json.loads(value) for key, value in new.execute("SELECT key, value FROM settings")}
        report.kept_settings = stricter_settings(settings)
        report.dropped_settings = sorted(set(settings) - set(report.kept_settings))
        now = time.time()
        with new:
            new.execute("DELETE FROM settings")
            new.executemany(
                "INSERT INTO settings(key, value, updated_at) VALUES (?, ?, ?)",
                [(key, json.dumps(value), now) for key, value in report.kept_settings.items()],
            )
            # Old servers' locks lived in the old folder: here they would look crashed.
            new.execute("UPDATE servers SET state = 'exited', ended_at = ? WHERE state = 'live'", (now,))
            _close_active(new, now)
            new.execute("DELETE FROM ui_requests")
        report.copied_journal = True
    finally:
        new.close()


def _close_active(db: sqlite3.Connection, now: float) -> None:
    db.execute(
        "UPDATE commands SET status = 'interrupted', reason = ?, ended_at = ? WHERE status IN ('waiting', 'running')",
        (INTERRUPTED_REASON, now),
    )


def _create(target: Path) -> None:
    """An empty journal of this version at `target`."""
    with sqlite3.connect(target) as db:
        for statement in MIGRATIONS[0].split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
    db.close()


def _import_history(source: Path, target: Path, report: MigrationReport) -> None:
    """Add the MSIX copy's commands (history only: no settings, no servers) to the staged journal."""
    if not target.exists():
        _create(target)
    db = sqlite3.connect(target)
    try:  # closed whatever fails, the ATTACH included: left open, it kept the staged file's WAL apart
        try:  # the path quoted: a `#` or `?` in it (a Windows user name may hold one) would end it
            db.execute("ATTACH DATABASE ? AS msix", (f"file:{urllib.parse.quote(source.as_posix())}?mode=ro",))
        except sqlite3.OperationalError:
            db.execute("ATTACH DATABASE ? AS msix", (str(source),))
        theirs = {row[1] for row in db.execute("PRAGMA msix.table_info(commands)")}
        ours = {row[1] for row in db.execute("PRAGMA main.table_info(commands)")}
        # No ids (they would collide), no server, no confirmation id (unique, and nobody can answer it).
        columns = sorted((theirs & ours) - {"id", "server_id", "confirmation_id"})
        names = ", ".join(columns)
        with db:
            cursor = db.execute(f"INSERT INTO main.commands ({names}) SELECT {names} FROM msix.commands ORDER BY id")
            report.imported_commands = cursor.rowcount
            _close_active(db, time.time())
        db.execute("DETACH DATABASE msix")
    finally:
        db.close()


def _set_notice(db: sqlite3.Connection, text: str) -> None:
    db.execute(
        "INSERT INTO settings(key, value, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        (NOTICE_SETTING, json.dumps(text), time.time()),
    )


def _copy_logs(source: Path, target: Path) -> int:
    if not source.is_dir():
        return 0
    copied = 0
    for item in source.iterdir():
        if item.is_file() and not (target / item.name).exists():
            shutil.copyfile(item, target / item.name)
            copied += 1
    return copied
