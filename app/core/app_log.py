"""The app's own log (what the tray and its helpers did, never the commands): rotating files in the log folder.

Each kind of process writes its own file (`tray.log`, `log-window.log`...): Python's rotating
handler is not safe across processes, and one file per process kind means two processes never
rotate the same file under each other. The commands themselves live in the journal, not here.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from io import TextIOWrapper
from pathlib import Path

from app.core import data_folder
from app.core.paths import PRIVATE_FILE_MODE, AppPaths

LOG_MAX_BYTES = 1024 * 1024
LOG_BACKUPS_KEPT = 3
LOG_FORMAT = "%(asctime)s %(process)d %(threadName)s %(levelname)s %(name)s: %(message)s"

_HANDLER_MARK = "_cowork_terminal_handler"


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating handler whose every file, the first and each one re-created by rotation, is 0600.

    The mode is given to `os.open` itself, so no umask change (process-wide, not thread-safe) is needed.
    """

    def _open(self) -> TextIOWrapper:
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if "a" in self.mode else os.O_TRUNC)
        fd = os.open(self.baseFilename, flags, PRIVATE_FILE_MODE)
        if os.name == "posix":
            os.fchmod(fd, PRIVATE_FILE_MODE)  # a file that existed before with a wider mode
        return open(fd, self.mode, encoding=self.encoding, errors=self.errors)  # type: ignore[return-value]  # noqa: SIM115


def log_file(paths: AppPaths, name: str) -> Path:
    """Where the process kind `name` logs: `<log dir>/<name>.log`."""
    return paths.log_dir / f"{name}.log"


def configure(paths: AppPaths, name: str, *, level: int = logging.INFO, echo_to_stderr: bool = False) -> Path:
    """Send the root logger to `<log dir>/<name>.log` (rotated), and to stderr when asked.

    Calling it again replaces the handlers it added before (tests configure several times in one
    process), and leaves handlers that others installed alone. Returns the log file's path.
    """
    data_folder.ensure(paths)
    path = log_file(paths, name)  # private (0600): the handler creates it so, and fixes an older one
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, _HANDLER_MARK, False):
            root.removeHandler(handler)
            handler.close()
    handlers: list[logging.Handler] = [
        PrivateRotatingFileHandler(path, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS_KEPT, encoding="utf-8")
    ]
    if echo_to_stderr and sys.stderr is not None:  # a windowed (pythonw / frozen GUI) app has no stderr
        handlers.append(logging.StreamHandler(sys.stderr))
    formatter = logging.Formatter(LOG_FORMAT)
    for handler in handlers:
        handler.setFormatter(formatter)
        setattr(handler, _HANDLER_MARK, True)
        root.addHandler(handler)
    root.setLevel(level)
    # A log line that cannot be written (a full disk) is dropped, not printed as a traceback.
    logging.raiseExceptions = False
    return path
