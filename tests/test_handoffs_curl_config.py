"""curl's files of options, read as curl reads them (a red team of issue 21's hand-offs, 2026-12-05):
each of these reached a daemon's socket under curl 7.88 while the command was judged moderate:
a default file the classifier did not read (~/.config/curlrc, $XDG_CONFIG_HOME/curlrc), a variable
the command line sets (`HOME=. curl`), a spelling of the option (`UNIX-SOCKET`, `unix-s`, `-Kk5`, a
form feed), a value read past its end, `-K /dev/stdin`, a nested file looked for in the wrong
folder, and a chain of files deeper than the classifier follows."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.classifier import Tier, classify
from app.core.classifier.wrappers import MAX_CURL_CONFIG, MAX_CURL_LINES, curl_config_files
from tests.handoff_checks import held_outside

DOCKER = "/run/docker.sock"
CURL = shutil.which("curl")


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with a project in it; curl's variables unset, as for a tray started plainly."""
    folder = tmp_path / "ana"
    (folder / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("CURL_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return folder


def _reasons(command: str, cwd: Path) -> tuple[str, ...]:
    result = classify(command, cwd=str(cwd))
    assert result.tier is Tier.DESTRUCTIVE, (command, result)
    return result.reasons


_LINUX_HOME = ["/home/ana/.curlrc", "/home/ana/curlrc", "/home/ana/.config/.curlrc", "/home/ana/.config/curlrc"]
_EVERY = ["/c/.curlrc", "/c/curlrc", "/x/.curlrc", "/x/curlrc", "/h/.curlrc", "/h/curlrc", "/home/ana/.curlrc",
          "/home/ana/curlrc", "/c/.config/.curlrc", "/c/.config/curlrc", "/h/.config/.curlrc", "/h/.config/curlrc",
          "/home/ana/.config/.curlrc", "/home/ana/.config/curlrc"]  # fmt: skip
_WINDOWS = [f"{folder}/{name}" for folder in ("C:\\Users\\ana", "C:\\A", "C:\\Users\\ana/Application Data",
            "C:\\Users\\ana/.config") for name in (".curlrc", "curlrc", "_curlrc")]  # fmt: skip


@pytest.mark.parametrize(
    ("platform", "environ", "home", "files"),
    [
        ("linux", {}, "/home/ana", _LINUX_HOME),
        ("linux", {"CURL_HOME": "", "XDG_CONFIG_HOME": ""}, "/home/ana", _LINUX_HOME),  # empty: skipped, as curl does
        ("darwin", {"HOME": "/home/ana/"}, "/home/ana", _LINUX_HOME),
        ("linux", {"CURL_HOME": "/c/", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/home/ana", _EVERY),
        ("win32", {"USERPROFILE": "C:\\Users\\ana", "APPDATA": "C:\\A"}, "C:\\Users\\ana", _WINDOWS),
    ],
)
def test_every_default_file_curl_may_read(platform: str, environ: dict[str, str], home: str, files: list[str]) -> None:
    assert curl_config_files(platform, environ, home) == files


@pytest.mark.parametrize(
    ("variable", "file"),
    [
        (None, ".config/curlrc"),  # ~/.config/curlrc when XDG_CONFIG_HOME is not set
        ("XDG_CONFIG_HOME", "curlrc"),  # curl 8's name
        ("XDG_CONFIG_HOME", ".curlrc"),  # curl 7.88's
        ("CURL_HOME", ".config/curlrc"),
        ("CURL_HOME", ".curlrc"),
    ],
)
def test_each_default_file_curl_may_read_is_read(
    user_home: Path, monkeypatch: pytest.MonkeyPatch, variable: str | None, file: str
) -> None:
    folder = user_home if variable is None else user_home / "elsewhere"
    if variable is not None:
        monkeypatch.setenv(variable, str(folder))
    (folder / file).parent.mkdir(parents=True, exist_ok=True)
    (folder / file).write_text(f"unix-socket {DOCKER}\n")
    held_outside("curl http://x/containers/json", str(user_home / "project"), deciding=True)
    assert classify("curl -q http://x/", cwd=str(user_home / "project")).tier is Tier.MODERATE


@pytest.mark.parametrize(
    ("command", "moved"),
    [
        ("HOME=. curl http://x/", "$HOME"),
        ("XDG_CONFIG_HOME=. curl http://x/", "$XDG_CONFIG_HOME"),
        ("env HOME=/tmp/x curl http://x/", "$HOME"),
        ("export XDG_CONFIG_HOME=.; curl http://x/", "$XDG_CONFIG_HOME"),
        ("printf -v HOME %s .; curl -s http://x/", "$HOME"),
        ("bash -c 'HOME=. curl http://x/'", "$HOME"),
        ("CURL_HOME=. curl http://x/", "$CURL_HOME"),  # the report's record of what the line sets
        ("env CURL_HOME=. curl http://x/", "$CURL_HOME"),
        ("export CURL_HOME=.; curl http://x/", "$CURL_HOME"),
        ('declare "$v=."; curl http://x/', "$*"),  # a name only known when it runs
    ],
)
def test_a_variable_that_moves_curls_files_on_the_command_line_is_held(
    user_home: Path, command: str, moved: str
) -> None:
    """The classifier's environment is the tray's: where such a command's curl finds its files is not told."""
    reasons = _reasons(command, user_home / "project")
    assert f"cannot tell what runs: curl reads its options from {moved}" in reasons, reasons


def test_a_variable_set_for_a_curl_that_reads_no_default_file_keeps_its_tier(user_home: Path) -> None:
    for command in ("HOME=. curl -q http://x/", "HOME=. curl --disable http://x/", "HOME=. git --version"):
        assert classify(command, cwd=str(user_home / "project")).tier is Tier.MODERATE, command


_OUT = "/run/out.sock"  # a socket outside the project
_BACK = "x" + "/.." * 16  # what follows the value, were it read on: back to the root folder, then the project's


def _project_with_own_socket(project: Path) -> None:
    os.mkfifo(project / "app.sock")  # the project's own socket (a FIFO stands in: only its place counts)
    (project / "k5").write_text(f"unix-socket {DOCKER}\n")


@pytest.mark.parametrize(
    "line",
    [
        f"UNIX-SOCKET {DOCKER}",
        f"Unix-Socket={DOCKER}",
        f"unix-s {DOCKER}",  # a prefix curl takes
        f"--Unix-S {DOCKER}",
        f"unix-socket\f{DOCKER}",  # a form feed separates, as any of C's blanks does
        f"\v unix-socket {DOCKER}",
        "abstract-unix-s docker",
        "conf k5",
        "CONFIG=k5",
        "-Kk5",
        "-sKk5",
        "-sK k5",
        "expand-unix-socket {{sock}}",  # curl 8.3: a variable's value
        "expand-config {{cfg}}",
        f"--unix-socket={DOCKER}",  # curl 7.88 refuses a dashed name with `=`; 8.16 reads it (9f9fecc724)
        # the value ends at its closing quote, or at a blank: what follows does not lead it back
        f'unix-socket = "{_OUT}" {_BACK}{{project}}/app.sock"',
        f"unix-socket {_OUT} {_BACK}{{project}}/app.sock",
        f'unix-socket "{_OUT}\\" {_BACK}{{project}}/app.sock',  # an escaped quote does not close it
    ],
)
def test_each_spelling_of_a_socket_in_a_curl_config_file_is_held(user_home: Path, line: str) -> None:
    project = user_home / "project"
    _project_with_own_socket(project)
    (project / "k").write_text(line.replace("{project}", str(project)) + "\n")
    result = classify("curl -K k http://x/", cwd=str(project))
    assert result.tier is Tier.DESTRUCTIVE, (line, result)


@pytest.mark.parametrize(
    "line",
    [
        'unix-socket "{project}/app\\.sock"',  # a backslash escapes the letter after it
        "unix-socket app.sock # the dev server",
        f"# unix-socket {DOCKER}",
        f"// unix-socket {DOCKER}",
        f"* unix-socket {DOCKER}",
        "unix-socket",  # no value: curl refuses it
        "url = https://example.com",
    ],
)
def test_a_line_curl_does_not_take_for_another_socket_keeps_the_tier(user_home: Path, line: str) -> None:
    project = user_home / "project"
    _project_with_own_socket(project)
    (project / "k").write_text(line.replace("{project}", str(project)) + "\n")
    assert classify("curl -K k http://x/", cwd=str(project)).tier is Tier.MODERATE, line


def test_a_quoted_value_not_closed_ends_with_its_line_end(user_home: Path) -> None:
    """curl keeps the line's `\\n` in it: `app.sock\\n`, another file than the project's app.sock."""
    project = user_home / "project"
    _project_with_own_socket(project)
    (project / "app.sock\n").symlink_to(DOCKER)
    (project / "k").write_text('unix-socket "app.sock\n')
    held_outside("curl -K k http://x/", str(project), deciding=True)


@pytest.mark.parametrize(
    "command",
    [
        f"curl --UNIX-SOCKET {DOCKER} http://x/",
        f"curl --un {DOCKER} http://x/",  # curl 7.88 takes it
        "curl --Abstract-Unix-Socket docker http://x/",
        "curl --CONFIG sock.cfg http://x/",
        "curl -sK sock.cfg http://x/",
    ],
)
def test_each_spelling_on_curls_command_line_is_held(user_home: Path, command: str) -> None:
    project = user_home / "project"
    (project / "sock.cfg").write_text(f"unix-socket {DOCKER}\n")
    held_outside(command, str(project), deciding=True)


def test_an_option_value_curl_expands_from_a_variable_cannot_be_told(user_home: Path) -> None:
    reasons = _reasons("curl --expand-config '{{cfg}}' http://x/", user_home / "project")
    assert reasons == ("cannot tell what runs: curl reads its options from '{{cfg}}'",)


@pytest.mark.parametrize("named", ["/dev/stdin", "/proc/self/fd/0", "/dev/fd/3", "fifo", "link", "/dev/../dev/stdin"])
def test_a_named_config_that_is_not_a_regular_file_cannot_be_told(user_home: Path, named: str) -> None:
    """What curl reads from its own standard input or descriptor is not this process's."""
    project = user_home / "project"
    os.mkfifo(project / "fifo")
    (project / "link").symlink_to("/dev/stdin")
    for command in (f"curl -K {named} http://x/", f"curl --config {named} http://x/"):
        assert _reasons(command, project) == (f"cannot tell what runs: curl reads its options from {named}",)


def test_dev_null_as_a_config_file_is_empty(user_home: Path) -> None:
    project = user_home / "project"
    (project / "null").symlink_to("/dev/null")
    for command in ("curl -K /dev/null http://x/", "curl -K null http://x/", "curl -K missing.cfg http://x/"):
        assert classify(command, cwd=str(project)).tier is Tier.MODERATE, command


@pytest.mark.parametrize(
    "curlrc",
    [
        "link to stdin",
        "a NUL",  # curl's line runs on into the next one
        "too long",
    ],
)
def test_a_default_file_that_cannot_be_read_as_curl_reads_it_is_held(user_home: Path, curlrc: str) -> None:
    file = user_home / ".curlrc"
    if curlrc == "link to stdin":
        file.symlink_to("/dev/stdin")
    elif curlrc == "a NUL":
        file.write_bytes(b"silent\0\nurl http://x/\n")
    else:
        file.write_text("# " + "x" * MAX_CURL_CONFIG + f"\nunix-socket {DOCKER}\n")
    reasons = _reasons("curl http://x/", user_home / "project")
    assert len(reasons) == 1 and reasons[0].startswith("cannot tell what runs: curl reads its options from /"), reasons


def test_a_nested_config_file_is_found_from_the_folder_curl_runs_in(user_home: Path) -> None:
    """`config FILE` in a file is opened as curl opens any file: from its own folder, not the file's."""
    project = user_home / "project"
    (project / "sub").mkdir()
    (project / "sub" / "k").write_text("config k5\n")
    (project / "k5").write_text(f"unix-socket {DOCKER}\n")
    (project / "sub" / "k5").write_text("silent\n")
    held_outside("curl -K sub/k http://x/", str(project), deciding=True)
    (project / "sub" / "k").write_text("config k6\n")
    (project / "sub" / "k6").write_text(f"unix-socket {DOCKER}\n")  # curl does not find it: it refuses
    assert classify("curl -K sub/k http://x/", cwd=str(project)).tier is Tier.MODERATE


def test_files_named_deeper_than_followed_cannot_be_told(user_home: Path) -> None:
    project = user_home / "project"
    for n in range(1, 6):
        (project / f"c{n}").write_text(f"silent\nconfig c{n + 1}\n")
    (project / "c4").write_text("silent\n")
    assert classify("curl -K c1 http://x/", cwd=str(project)).tier is Tier.MODERATE  # four files
    (project / "c4").write_text("config c5\n")
    assert _reasons("curl -K c1 http://x/", project) == ("cannot tell what runs: curl reads its options from c5",)
    (project / "loop").write_text("config loop\n")
    assert _reasons("curl -K loop http://x/", project)[0].startswith("cannot tell what runs: curl reads its options")


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        ("curl -q http://x/", False),
        ("curl -qs http://x/", False),  # curl looks at the first word's first two letters
        ("curl --disable http://x/", False),
        ("curl --DISABLE http://x/", False),
        ("curl -s -q http://x/", True),  # not first: ~/.curlrc is read
        ("curl", True),
        ("curl -q -K sock.cfg http://x/", True),  # -K is read all the same
    ],
)
def test_only_a_first_q_or_disable_leaves_the_default_file_unread(user_home: Path, command: str, reads: bool) -> None:
    project = user_home / "project"
    (project / "sock.cfg").write_text(f"unix-socket {DOCKER}\n")
    (user_home / ".curlrc").write_text(f"unix-socket {DOCKER}\n")
    if reads:
        held_outside(command, str(project), deciding=True)
    else:
        assert classify(command, cwd=str(project)).tier is Tier.MODERATE


@pytest.mark.parametrize(
    "command",
    [
        f"mkdir -p ~/.config && echo unix-socket={DOCKER} > ~/.config/curlrc; curl http://x/",
        f"echo unix-socket={DOCKER} > ~/curlrc; curl http://x/",
        'ln -s "$PWD/cfg" ~/.config; curl http://x/',  # the folder it is in
    ],
)
def test_a_default_file_this_command_writes_cannot_be_told(user_home: Path, command: str) -> None:
    reasons = _reasons(command, user_home / "project")
    assert any("reads options from" in r and "which this command writes" in r for r in reasons), reasons


def test_a_file_with_more_lines_that_may_name_a_socket_than_are_read_cannot_be_told(user_home: Path) -> None:
    """Each such line costs a look at a file: a file of thousands is held, not read through."""
    project = user_home / "project"
    (project / "few.cfg").write_text("compressed\ncookie = a=b\nconnect-timeout 5\n" * 20)
    (project / "many.cfg").write_text("cookie = a=b\n" * (MAX_CURL_LINES + 1))
    assert classify("curl -K few.cfg http://x/", cwd=str(project)).tier is Tier.MODERATE
    assert _reasons("curl -K many.cfg http://x/", project) == (
        "cannot tell what runs: curl reads its options from many.cfg",
    )
    assert _reasons("curl -K few.cfg -K few.cfg -K few.cfg -K few.cfg -K few.cfg http://x/", project) == (
        "cannot tell what runs: curl reads its options from few.cfg",  # the lines of all the files curl reads
    )


# ---- against curl itself: what it takes for a socket, the classifier holds, and what it refuses, it need not


class _Socket:
    """A Unix socket that answers HTTP and counts who connected (`path` bytes: an abstract one)."""

    def __init__(self, path: Path | bytes) -> None:
        self.server = socket.socket(socket.AF_UNIX)
        try:
            self.server.bind(path if isinstance(path, bytes) else str(path))
        except OSError:
            self.server.close()
            raise
        self.server.listen(8)
        self.reached = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                peer, _ = self.server.accept()
            except OSError:
                return
            self.reached += 1
            with peer:
                peer.settimeout(2)
                try:
                    peer.recv(4096)
                    peer.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass


@pytest.fixture
def daemon() -> Iterator[tuple[_Socket, Path]]:
    folder = Path(tempfile.mkdtemp(prefix="curl-", dir="/tmp"))  # a socket's path is short: outside tmp_path
    served = _Socket(folder / "d.sock")  # outside the project, as a daemon's is
    yield served, folder / "d.sock"
    with contextlib.suppress(OSError):
        served.server.shutdown(socket.SHUT_RDWR)  # wakes its accept()
    served.server.close()
    shutil.rmtree(folder)


@pytest.mark.skipif(CURL is None, reason="curl is not installed")
@pytest.mark.parametrize(
    "line",
    [
        "UNIX-SOCKET {sock}",
        "unix-s {sock}",
        "unix-socket\f{sock}",
        "unix-socket :=: {sock}",
        "-Kk5",
        "conf k5",
        'unix-socket "{sock}" {back}{project}/app.sock"',
        "unix-socket {sock} {back}{project}/app.sock",
        # curl refuses these: no socket (`--unix-socket={sock}` too, before 8.16: held, as 8.16 reads it)
        "--unix-socket: {sock}",
        "# unix-socket {sock}",
        "/ unix-socket {sock}",
        'unix-socket "{project}/app\\.sock"',
    ],
)
def test_the_classifier_holds_what_curl_takes_for_a_socket(
    user_home: Path, daemon: tuple[_Socket, Path], line: str
) -> None:
    served, path = daemon
    project = user_home / "project"
    os.mkfifo(project / "app.sock")
    (project / "k5").write_text(f"unix-socket {path}\n")
    (project / "k").write_text(line.format(sock=path, project=project, back=_BACK) + "\n")
    assert CURL is not None
    subprocess.run([CURL, "-s", "-m", "5", "-K", "k", "http://x/"], cwd=project, capture_output=True, timeout=30)
    held = classify("curl -K k http://x/", cwd=str(project)).tier is Tier.DESTRUCTIVE
    assert held == (served.reached > 0), (line, served.reached)
