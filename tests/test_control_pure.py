"""The channel's decisions as pure functions, called with each platform's values."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest

from app.core.authority.state import DEFAULTS, STRICTEST, ControlState, loosened, strictest, with_changes
from app.core.channel.address import MACOS_SUN_PATH_MAX, channel_address, data_dir_key
from app.core.channel.peer import OwnFacts, PeerFacts, client_refusal, not_dumpable, runs_this_app, tray_refusal
from app.core.channel.wire import MAX_FRAME_BYTES, QUICK_FRAME_BYTES, Channel, ProtocolError, decode, encode
from app.core.policy.direction import LOOSEN, NEUTRAL, REFUSE, TIGHTEN, classify_request

OWN_SOURCE = OwnFacts(uid=1000, executable="/usr/bin/python3.11", frozen=False, data_dir="/home/ana/.local/share/ct")
OWN_FROZEN = OwnFacts(uid=1000, executable="/opt/cowork-terminal/cowork-terminal", frozen=True, data_dir="/d")


def test_linux_uses_an_abstract_socket_named_for_the_user_and_the_data_folder() -> None:
    address = channel_address("linux", "1000", "/home/ana/.local/share/cowork-terminal")
    assert address.kind == "abstract"
    assert address.name == f"cowork-terminal/1000/{data_dir_key('/home/ana/.local/share/cowork-terminal')}"
    assert address.sockaddr().startswith("\0")
    assert channel_address("linux", "1000", "/other").name != address.name


def test_macos_uses_a_socket_in_the_data_folder_or_tmp_when_the_path_is_too_long() -> None:
    short = channel_address("darwin", "501", "/Users/ana/Library/Application Support/cowork-terminal")
    assert short.kind == "path" and short.name.endswith("/run/tray.sock")
    long_dir = "/Users/ana/" + "x" * MACOS_SUN_PATH_MAX
    fallback = channel_address("darwin", "501", long_dir)
    assert fallback.name.startswith("/tmp/cowork-terminal-501/") and len(fallback.name) < MACOS_SUN_PATH_MAX


def test_windows_uses_a_named_pipe_carrying_the_users_sid() -> None:
    sid = "S-1-5-21-1004336348-1177238915-682003330-512"
    address = channel_address("win32", sid, r"C:\Users\ana\.cowork-terminal")
    assert address.kind == "pipe"
    assert address.name.startswith(rf"\\.\pipe\cowork-terminal-{sid}-")


def test_strictest_merges_each_setting_to_its_strictest_value() -> None:
    remembered = ControlState(paused=True, approval_mode="never", approval_window_s=10.0, tools="all")
    stored = ControlState(paused=False, approval_mode="all", approval_window_s=40.0, tools="execute")
    assert strictest(stored, remembered) == ControlState(True, "all", 10.0, "execute")


def test_loosened_names_each_relaxed_setting_and_nothing_for_a_tightening() -> None:
    assert loosened(DEFAULTS, STRICTEST) == []
    assert loosened(STRICTEST, DEFAULTS) == ["paused", "approval_mode", "approval_window_s", "tools"]
    assert loosened(DEFAULTS, with_changes(DEFAULTS, approval_mode="never")) == ["approval_mode"]


@pytest.mark.parametrize(
    "wire",
    [
        None,
        "paused",
        {"paused": "no"},
        {"approval_mode": "sometimes"},
        {"approval_window_s": True},
        {"tools": "everything"},
    ],
)
def test_a_malformed_state_message_reads_as_the_strict_side(wire: object) -> None:
    state = ControlState.from_wire(wire)
    assert state.paused is True, "a message that does not say 'not paused' plainly means paused"
    assert loosened(STRICTEST, state) == [] or isinstance(wire, dict) and len(wire) == 1
    if isinstance(wire, dict):
        key = next(iter(wire))
        if key != "paused":
            assert getattr(state, key) == getattr(STRICTEST, key), f"a malformed {key} reads as its strictest value"


@pytest.mark.parametrize(
    ("op", "fields", "kind"),
    [
        ("pause", {}, TIGHTEN),
        ("stop", {"id": 3}, TIGHTEN),
        ("deny", {"id": 3}, TIGHTEN),
        ("quit", {}, TIGHTEN),
        ("resume", {}, LOOSEN),
        ("approve", {"id": 3}, LOOSEN),
        ("clear_history", {}, LOOSEN),
        ("state", {}, NEUTRAL),
        ("holds", {}, NEUTRAL),
        ("open_log", {}, NEUTRAL),
        ("settings", {"changes": {"approval_mode": "all"}}, TIGHTEN),
        ("settings", {"changes": {"approval_mode": "never"}}, LOOSEN),
        ("settings", {"changes": {"approval_window_s": 55}}, LOOSEN),
        ("settings", {"changes": {"approval_window_s": 5}}, TIGHTEN),
        ("settings", {"changes": {"tools": "execute"}}, TIGHTEN),
        ("settings", {"changes": {"paused": False}}, REFUSE),  # not a setting this request may carry
        ("settings", {"changes": "never"}, REFUSE),
        ("settings", {"changes": {}}, REFUSE),
        # Values no comparison can order are refused before any comparison (NaN > 40 is false).
        ("settings", {"changes": {"approval_window_s": float("nan")}}, REFUSE),
        ("settings", {"changes": {"approval_window_s": float("inf")}}, REFUSE),
        ("settings", {"changes": {"approval_window_s": -5}}, REFUSE),
        ("settings", {"changes": {"approval_window_s": 1e300}}, REFUSE),
        ("settings", {"changes": {"approval_window_s": True}}, REFUSE),
        ("settings", {"changes": {"approval_window_s": "5"}}, REFUSE),
        ("settings", {"changes": {"approval_mode": "sometimes"}}, REFUSE),
        ("something-new", {}, LOOSEN),  # unknown: the safe side
    ],
)
def test_each_request_is_classified_and_anything_unlisted_loosens(op: str, fields: dict, kind: str) -> None:
    assert classify_request(op, fields, DEFAULTS) == kind


def test_a_tray_must_be_the_same_user_the_same_program_running_this_app_for_this_folder() -> None:
    python = OWN_SOURCE.executable
    genuine = PeerFacts(41, 1000, python, (python, "-m", "app", "tray"))
    assert tray_refusal(genuine, OWN_SOURCE, OWN_SOURCE.data_dir) is None
    script = PeerFacts(42, 1000, python, (python, "/tmp/fake_tray.py"))
    assert "does not run Cowork Terminal" in tray_refusal(script, OWN_SOURCE, OWN_SOURCE.data_dir)
    other_user = PeerFacts(43, 0, python, genuine.argv)
    assert "another user" in tray_refusal(other_user, OWN_SOURCE, OWN_SOURCE.data_dir)
    other_program = PeerFacts(44, 1000, "/usr/bin/socat", ("socat",))
    assert "not Cowork Terminal" in tray_refusal(other_program, OWN_SOURCE, OWN_SOURCE.data_dir)
    other_home = tray_refusal(genuine, OWN_SOURCE, "/tmp/elsewhere")
    assert "another folder" in other_home
    unknown = PeerFacts(45, 1000, None)
    assert "did not tell" in tray_refusal(unknown, OWN_SOURCE, OWN_SOURCE.data_dir)
    for malformed in (None, 7, [OWN_SOURCE.data_dir]):  # a hello whose data folder is not a path
        assert "another folder" in tray_refusal(genuine, OWN_SOURCE, malformed), malformed


def test_a_frozen_app_checks_the_executable_not_the_arguments() -> None:
    genuine = PeerFacts(7, 1000, OWN_FROZEN.executable, (OWN_FROZEN.executable,))
    assert tray_refusal(genuine, OWN_FROZEN, "/d") is None
    copy = PeerFacts(8, 1000, "/tmp/x", ("/tmp/x",))
    assert tray_refusal(copy, OWN_FROZEN, "/d") is not None


def test_a_tray_that_hides_its_program_is_judged_by_its_arguments() -> None:
    """Our tray is not dumpable: a server without root's powers cannot read its /proc/<pid>/exe."""
    python = OWN_SOURCE.executable
    genuine = PeerFacts(41, 1000, None, (python, "-I", "-m", "app", "tray"), hidden=True)
    assert tray_refusal(genuine, OWN_SOURCE, OWN_SOURCE.data_dir) is None
    script = PeerFacts(42, 1000, None, (python, "/tmp/fake_tray.py"), hidden=True)
    assert "does not run Cowork Terminal" in tray_refusal(script, OWN_SOURCE, OWN_SOURCE.data_dir)
    gone = PeerFacts(43, 1000, None, genuine.argv)  # neither hidden nor told: the process ended
    assert "did not tell" in tray_refusal(gone, OWN_SOURCE, OWN_SOURCE.data_dir)
    contained = PeerFacts(44, 1000, None, genuine.argv, pid_depth=2, hidden=True)
    own = OwnFacts(1000, python, False, OWN_SOURCE.data_dir, "pid:[1]", pid_depth=1)
    assert "inside a command's container" in tray_refusal(contained, own, own.data_dir)
    frozen = PeerFacts(7, 1000, None, ("cowork-terminal", "tray"), hidden=True)
    assert tray_refusal(frozen, OWN_FROZEN, "/d") is None
    other = PeerFacts(8, 1000, None, ("/tmp/x", "tray"), hidden=True)
    assert "does not run Cowork Terminal" in tray_refusal(other, OWN_FROZEN, "/d")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="root, to give a file away")
def test_only_a_process_whose_proc_files_belong_to_root_counts_as_not_dumpable(tmp_path: Path) -> None:
    """A program hidden by a security module's rule, not by the process itself, stays refused."""
    status = tmp_path / "41" / "status"
    status.parent.mkdir()
    status.write_text("Name:\tpython3\n")
    assert not_dumpable(41, tmp_path) is True  # what the kernel shows of a non-dumpable process
    os.chown(status, 1000, 1000)
    assert not_dumpable(41, tmp_path) is False  # its user's: dumpable, hidden for another reason
    assert not_dumpable(42, tmp_path) is False  # gone


def test_windows_peers_compare_sids() -> None:
    own = OwnFacts("S-1-5-21-1-2-3-1001", r"C:\Program Files\Cowork Terminal\cowork-terminal.exe", True, r"C:\d")
    assert client_refusal(PeerFacts(9, "S-1-5-21-1-2-3-1001", None), own) is None
    assert "another user" in client_refusal(PeerFacts(9, "S-1-5-18", None), own)


@pytest.mark.parametrize(
    ("argv", "ours"),
    [
        (("python", "-m", "app", "tray"), True),
        (("python", "-X", "utf8", "-m", "app"), True),
        (("/home/ana/.venv/bin/python", "/home/ana/.venv/bin/cowork-terminal"), True),
        (("python", "-m", "app.fake"), False),
        (("python", "/tmp/cowork-terminal.py"), False),
        (("python", "-c", "import app"), False),
        (("python",), False),
    ],
)
def test_a_source_install_is_recognised_by_how_python_runs_it(argv: tuple[str, ...], ours: bool) -> None:
    assert runs_this_app(argv) is ours


def test_frames_are_json_objects_with_an_op_and_a_size_limit() -> None:
    assert decode(encode({"op": "pause"})) == {"op": "pause"}
    for bad in (b"[1]", b'{"no": "op"}', b"\x80\x04K\x01.", b"{"):
        with pytest.raises(ProtocolError):
            decode(bad)
    with pytest.raises(ProtocolError):
        encode({"op": "x", "data": "y" * MAX_FRAME_BYTES})


@pytest.mark.skipif(os.name == "nt", reason="sockets that select writable: POSIX")
def test_a_small_frame_is_sent_at_once_and_never_blocks_on_a_full_socket_or_a_busy_sender() -> None:
    """The command host sends a call's result from its loop (Peer.push): that send must never
    wait, or one server that stops reading would hold up every other server's commands."""
    import socket
    from multiprocessing.connection import Connection

    ours, theirs = socket.socketpair()
    channel, peer = Channel(Connection(ours.detach()), tray_end=True), Connection(theirs.detach())
    try:
        assert channel.send_if_room(encode({"op": "call_result", "text": "hi"}))
        assert decode(peer.recv_bytes()) == {"op": "call_result", "text": "hi"}
        too_big = encode({"op": "call_result", "text": "x" * QUICK_FRAME_BYTES})  # too big to be sure
        assert not channel.send_if_room(too_big)
        with channel._send_lock:  # another thread mid-frame: not waited for
            assert not channel.send_if_room(encode({"op": "call_result"}))
        os.set_blocking(channel.connection.fileno(), False)
        filled = 0
        with contextlib.suppress(BlockingIOError):  # the peer reads nothing: fill its socket
            while True:
                filled += os.write(channel.connection.fileno(), b"\0" * 4096)
        os.set_blocking(channel.connection.fileno(), True)
        assert filled > 0
        began = time.monotonic()
        assert not channel.send_if_room(encode({"op": "call_result", "text": "hi"}))
        assert time.monotonic() - began < 1.0
    finally:
        channel.close()
        peer.close()


@pytest.mark.skipif(os.name == "nt", reason="sockets that select writable: POSIX")
def test_a_small_frame_goes_at_once_on_a_descriptor_above_the_1024_that_select_can_watch() -> None:
    """A tray with many servers and commands open may hold a socket numbered above 1023, which
    select() refuses with a ValueError: the result would have been lost with its task."""
    import fcntl
    import resource
    import socket
    from multiprocessing.connection import Connection

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    high = 2000
    if hard != resource.RLIM_INFINITY and hard <= high + 100:
        pytest.skip(f"this machine allows no descriptor numbered {high}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, high + 100), hard))
    ours, theirs = socket.socketpair()
    channel = Channel(Connection(fcntl.fcntl(ours.fileno(), fcntl.F_DUPFD, high)), tray_end=True)
    peer = Connection(theirs.detach())
    try:
        assert channel.connection.fileno() >= high
        assert channel.send_if_room(encode({"op": "call_result", "text": "hi"}))
        assert decode(peer.recv_bytes()) == {"op": "call_result", "text": "hi"}
    finally:
        channel.close()
        peer.close()
        ours.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.skipif(os.name == "nt", reason="sockets that select writable: POSIX")
def test_a_result_sent_at_once_never_overtakes_what_was_queued_for_that_server_before_it() -> None:
    """A call's progress waits in the peer's outbox; the result the command host then sends must not
    reach the server first (it would close the call, and the progress would come after its end)."""
    import socket
    import threading
    from multiprocessing.connection import Connection

    from app.core.authority.connection import Peer
    from app.core.channel.call_messages import CallProgress, CallResult
    from app.core.channel.peer import PeerFacts
    from app.core.channel.protocol import encode as encode_message
    from app.core.channel.transport import Accepted

    ours, theirs = socket.socketpair()
    channel = Channel(Connection(ours.detach()), tray_end=True)
    peer = Peer(Accepted(channel, PeerFacts(pid=None, uid=None, executable=None)))
    server = Connection(theirs.detach())
    try:
        # A progress too long to be sent at once waits for the writer, which does not run yet.
        progress = CallProgress("c1", 1.0, None, "x" * QUICK_FRAME_BYTES)
        result = CallResult("c1", {"content": []})
        peer.push(progress)
        peer.push(result)
        assert not server.poll(0.2)  # not sent ahead of the progress
        writer = threading.Thread(target=peer.write_loop, daemon=True)
        writer.start()
        got = [decode(server.recv_bytes()) for _ in range(2)]
        assert got == [encode_message(progress), encode_message(result)]
        peer.stop_writing()
        writer.join(5)
        peer.push(result)  # nothing waits, and no writer runs: only a send from this thread arrives
        assert server.poll(5)
        assert decode(server.recv_bytes()) == encode_message(result)
    finally:
        peer.channel.close()
        server.close()


def test_windows_paths_compare_without_case_and_others_exactly() -> None:
    own = OwnFacts(
        "S-1-5-21-1-2-3-1001",
        r"C:\Program Files\Cowork Terminal\cowork-terminal.exe",
        True,
        r"C:\Users\Ana\.cowork-terminal",
    )
    peer = PeerFacts(9, own.uid, r"c:\program files\cowork terminal\COWORK-TERMINAL.EXE")
    assert tray_refusal(peer, own, r"c:\users\ana\.cowork-terminal", platform="win32") is None
    assert tray_refusal(peer, own, own.data_dir, platform="linux") is not None
