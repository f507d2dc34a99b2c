"""Opening the channel: the tray listens, servers and the CLI connect. Threads, not asyncio.

asyncio's pipe API is undocumented and takes no security descriptor, and Windows has no AF_UNIX in
asyncio, so both ends use plain blocking sockets (or pipe handles) on their own threads.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import stat
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from app.core.channel.address import Address, channel_address
from app.core.channel.peer import PeerFacts, socket_peer
from app.core.channel.wire import Channel
from app.core.errors import CoworkError
from app.core.i18n import _
from app.core.paths import AppPaths, make_private_dir

log = logging.getLogger(__name__)

SEND_TIMEOUT_S = 2.0  # a peer that stops reading cannot block a sender longer than this
CONNECT_TIMEOUT_S = 2.0
LISTEN_BACKLOG = 16


class ChannelUnavailable(CoworkError):
    """No tray listens at the address (or it could not be reached)."""


class AddressTaken(CoworkError):
    """Another process already listens at the tray's address."""


def address_for(paths: AppPaths, platform: str = sys.platform) -> Address:
    real = os.path.realpath(paths.data_dir)
    if platform == "win32":  # pragma: no cover - Windows only (tested under Wine)
        from app.core.channel import windows_pipe

        user = windows_pipe.current_user_sid()
    else:
        user = str(os.getuid())
    return channel_address(platform, user, real)


@dataclass
class Accepted:
    channel: Channel
    peer: PeerFacts


def _channel_of(sock: socket.socket, *, tray_end: bool) -> Channel:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(SEND_TIMEOUT_S))
    connection = Connection(os.dup(sock.fileno()))
    return Channel(connection, wake=lambda: _shutdown_and_close(sock), tray_end=tray_end)


def _shutdown_and_close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


def _timeval(seconds: float) -> bytes:
    import struct

    whole = int(seconds)
    return struct.pack("ll", whole, int((seconds - whole) * 1_000_000))


class Listener:
    """The tray's end: accepts connections until closed."""

    def __init__(self, address: Address) -> None:
        self.address = address
        self._pipe: Any = None
        self._sock: socket.socket | None = None
        if address.kind == "pipe":  # pragma: no cover - Windows only (tested under Wine)
            from app.core.channel import windows_pipe

            self._pipe = windows_pipe.PipeListener(address.name)
            _gather_commands(self._pipe, address)
            return
        if address.kind == "path":  # pragma: no cover - macOS only
            _prepare_socket_folder(Path(address.name).parent)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(address.name)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(address.sockaddr())
        except OSError as exc:
            sock.close()
            raise AddressTaken(
                _("another program already listens at Cowork Terminal's address ({error})").format(
                    error=exc.strerror or exc
                )
            ) from None
        sock.listen(LISTEN_BACKLOG)
        self._sock = sock

    def accept(self) -> Accepted:
        """The next connection with the OS's facts about its peer; OSError once closed."""
        if self._pipe is not None:  # pragma: no cover - Windows only
            from app.core.channel import windows_pipe

            connection = self._pipe.accept()
            pid = windows_pipe.peer_pid(connection, we_are_server=True)
            peer = _windows_peer(pid, address=self.address)
            return Accepted(Channel(connection, tray_end=True), peer)
        assert self._sock is not None
        sock, _ = self._sock.accept()
        try:
            peer = socket_peer(sock)
        except OSError:
            sock.close()
            raise
        return Accepted(_channel_of(sock, tray_end=True), peer)

    def close(self) -> None:
        if self._pipe is not None:  # pragma: no cover - Windows only
            from app.core.execution import windows_jobs

            self._pipe.close()
            windows_jobs.let_go_of_commands()
            return
        if self._sock is not None:
            _shutdown_and_close(self._sock)


def connect(address: Address, timeout_s: float = CONNECT_TIMEOUT_S) -> tuple[Channel, PeerFacts]:
    """Connect to the tray; raises ChannelUnavailable when nobody listens."""
    if address.kind == "pipe":  # pragma: no cover - Windows only (tested under Wine)
        from app.core.channel import windows_pipe

        try:
            connection = windows_pipe.connect(address.name, timeout_s)
        except OSError as exc:
            raise ChannelUnavailable(f"Cowork Terminal is not running ({exc})") from None
        pid = windows_pipe.peer_pid(connection, we_are_server=False)
        return Channel(connection, tray_end=False), _windows_peer(pid, address=address)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        sock.connect(address.sockaddr())
    except OSError as exc:
        sock.close()
        raise ChannelUnavailable(f"Cowork Terminal is not running ({exc.strerror or exc})") from None
    sock.settimeout(None)
    try:
        peer = socket_peer(sock)
    except OSError as exc:
        sock.close()
        raise ChannelUnavailable(f"cannot tell who listens at the tray's address ({exc})") from None
    return _channel_of(sock, tray_end=False), peer


def _gather_commands(pipe: Any, address: Address) -> None:  # pragma: no cover - Windows only (tested under Wine)
    """The tray's named job, made as it starts to listen (windows_jobs.gather_commands): a name some
    other program holds is an address taken, and the tray does not start."""
    from app.core.execution import windows_jobs

    try:
        windows_jobs.gather_commands(windows_jobs.umbrella_name(address.name))
    except OSError as exc:
        pipe.close()
        log.error("the named job of the tray's commands: %s", exc)
        raise AddressTaken(_("another program holds the name Cowork Terminal gives its commands")) from None


def _windows_peer(pid: int, *, address: Address) -> PeerFacts:  # pragma: no cover - Windows only (tested under Wine)
    """The OS's facts about a pipe peer; its arguments too, which a source install's check needs
    (without them every python.exe peer was refused: found by the wine lane's `tray --quit`).
    `in_command_job`: in one of this process's command jobs (the tray's and a headless server's), or
    in the tray's named job, which a server or the CLI opens by name: a look-alike of the tray a
    command started is in it (windows_jobs). Not "in a job we are not in", which is also every tray
    a venv's launcher started."""
    from app.core.channel import windows_pipe
    from app.core.execution import windows_jobs

    return PeerFacts(
        pid,
        windows_pipe.process_user_sid(pid),
        windows_pipe.process_image(pid),
        windows_pipe.process_command_line(pid) or (),
        in_command_job=windows_jobs.in_any_job(pid, windows_jobs.umbrella_name(address.name)),
    )


def _prepare_socket_folder(folder: Path) -> None:  # pragma: no cover - macOS only
    """A 0700 folder of ours that is not a link: only this user can reach a socket inside it."""
    make_private_dir(folder)
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        raise AddressTaken(f"{folder} is not a private folder of this user: refusing to listen there")
