"""Where the tray listens, per operating system: pure functions of the user and the data folder.

- Linux: an abstract Unix socket. Nobody can unlink or replace it while the tray holds it, and it
  needs no runtime folder (MCP clients pass servers only HOME, PATH and a few more variables).
- macOS: a socket file in a private (0700) folder inside the data folder, or under /tmp when that
  path is longer than sun_path allows (104 bytes).
- Windows: a named pipe carrying the user's SID (see windows_pipe).
The data folder is part of the name, so a tray for another COWORK_TERMINAL_HOME never answers.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

MACOS_SUN_PATH_MAX = 104
SOCKET_FILE = "tray.sock"


@dataclass(frozen=True)
class Address:
    kind: str  # "abstract" (Linux), "path" (macOS), "pipe" (Windows)
    name: str  # for "abstract", without the leading NUL

    def sockaddr(self) -> str:
        return "\0" + self.name if self.kind == "abstract" else self.name


def data_dir_key(real_data_dir: str) -> str:
    """A short, stable name for one data folder (its real path, symlinks resolved)."""
    return hashlib.sha256(real_data_dir.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def channel_address(platform: str, user: str, real_data_dir: str, tmp_dir: str = "/tmp") -> Address:
    """The tray's address for this user (uid, or SID on Windows) and data folder."""
    key = data_dir_key(real_data_dir)
    if platform == "win32":
        return Address("pipe", rf"\\.\pipe\cowork-terminal-{user}-{key}")
    if platform == "darwin":
        path = f"{real_data_dir.rstrip('/')}/run/{SOCKET_FILE}"
        if len(path.encode()) >= MACOS_SUN_PATH_MAX:
            path = f"{tmp_dir.rstrip('/')}/cowork-terminal-{user}/{key}.sock"
        return Address("path", path)
    return Address("abstract", f"cowork-terminal/{user}/{key}")
