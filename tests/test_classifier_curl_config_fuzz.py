"""Our reader of curl's files of options (`wrappers._curl_options`) against curl itself, as a
differential fuzzer found them apart (2026-12-05; curl 7.88 prints the options it ends up with,
offline, with `--libcurl`): an empty socket path (`unix-socket ""`, a quote left open at the file's
end, `--unix-socket ''`) is no file of the project but libcurl's address of a lone NUL, the
abstract socket of the empty name, which curl reaches. And curl 8.16 takes `--name=value` (in a
file, on a line that starts with dashes, the value to the first space or tab: a form feed is in
it), which 7.88 refuses: read too."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.classifier import Tier, classify
from tests.handoff_checks import held_outside
from tests.test_handoffs_curl_config import _Socket

CURL = shutil.which("curl")
needs_curl = pytest.mark.skipif(CURL is None, reason="curl is not installed")
needs_abstract = pytest.mark.skipif(sys.platform != "linux", reason="abstract sockets are Linux's")
DOCKER = "/run/docker.sock"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project in a home folder, the project's own socket in it (a FIFO stands in: only its place
    counts); curl's variables unset, as for a tray started plainly."""
    home = tmp_path / "ana"
    (home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CURL_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    os.mkfifo(home / "project" / "app.sock")
    return home / "project"


def held(command: str, cwd: Path) -> bool:
    return classify(command, cwd=str(cwd)).tier is Tier.DESTRUCTIVE


@pytest.fixture
def empty_named() -> Iterator[_Socket]:
    deadline = time.monotonic() + 20  # one name per machine: a test in another worker may hold it a moment
    while True:
        try:
            served = _Socket(b"\0")  # the abstract socket of the empty name, a lone NUL
            break
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
            if time.monotonic() > deadline:  # another program on this machine holds it
                pytest.skip("the abstract socket of the empty name is taken")
            time.sleep(0.05)
    yield served
    with contextlib.suppress(OSError):
        served.server.shutdown(socket.SHUT_RDWR)  # wakes its accept()
    served.thread.join(10)  # its accept() over, the name is free once closed: the next test binds it
    served.server.close()


def run_curl(cwd: Path, *words: str) -> None:
    assert CURL is not None
    subprocess.run(  # noqa: S603 (curl from the PATH, to the socket this test serves)
        [CURL, "-q", "-s", "-m", "5", *words, "http://x/containers/json"],
        cwd=cwd,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )


# Each the fuzzer's, made as small as it goes: curl reached the empty name, ours took the project
@needs_curl
@needs_abstract
@pytest.mark.parametrize(
    "text",
    [
        'un "',  # a quote left open at the file's end: an empty value
        'unix-socket ""\n',
        'UNIX-SOCKET=""\n',
        '--unix-socket\t""\r\n',
        'fail\nunix-s\v\r""\rcompressed\n',
        # not an empty value: neither reached nor held
        "unix-socket app.sock\n",
    ],
)
def test_an_empty_socket_path_in_a_file_is_the_abstract_socket_of_the_empty_name(
    project: Path, empty_named: _Socket, text: str
) -> None:
    (project / "k").write_bytes(text.encode())
    run_curl(project, "-K", "k")
    assert held("curl -q -K k http://x/", project) == (empty_named.reached > 0), (text, empty_named.reached)


@needs_curl
@needs_abstract
@pytest.mark.parametrize("command", ["curl --unix-socket '' http://x/", 'curl --unix-socket "" http://x/'])
def test_an_empty_socket_path_on_the_command_line_is_held(project: Path, empty_named: _Socket, command: str) -> None:
    run_curl(project, "--unix-socket", "")
    assert empty_named.reached == 1
    held_outside(command, str(project), deciding=True)


def test_an_empty_socket_path_is_held_without_curl_too(project: Path) -> None:
    """curl 8.16's `--unix-socket=` too (curl 7.88 reads no `=`; later ones refuse an empty path)."""
    held_outside("curl --unix-socket= http://x/", str(project), deciding=True)
    (project / "k").write_text('unix-socket ""\n')
    held_outside("curl -K k http://x/", str(project), deciding=True)
    (project / ".curlrc").write_text("unix-socket app.sock\n")  # the project's own: as before
    assert classify("curl -K .curlrc http://x/", cwd=str(project)).tier is Tier.MODERATE


# curl 8.16 (src/tool_getparam.c, "add support for `--longopt=value`", 2025-06-30) splits a long
# option's word at its first `=`; in a file the word is the line's start up to a space or a tab
@pytest.mark.parametrize(
    "line",
    [
        f"--unix-socket={DOCKER}",
        "--abstract-unix-socket=docker",
        "--config=k5",
        "--unix-socket=app.sock\fd",  # the form feed is in the value: `app.sock\fd`, a link out
        "--unix-socket=",  # the empty name
        "-s\n--unix-socket=/run/x.sock\r\n",
    ],
)
def test_a_dashed_name_with_its_value_after_an_equals_sign_is_read(project: Path, line: str) -> None:
    (project / "k5").write_text(f"unix-socket {DOCKER}\n")
    (project / "app.sock\fd").symlink_to(DOCKER)
    (project / "k").write_bytes(line.encode() + b"\n")
    held_outside("curl -K k http://x/", str(project), deciding=True)


@pytest.mark.parametrize(
    ("line", "reads"),
    [
        ("--expand-config={{cfg}}", "{{cfg}}"),  # a variable's value
        ("--expand-unix-socket={{s}}", None),
    ],
)
def test_a_value_after_an_equals_sign_from_a_variable_cannot_be_told(
    project: Path, line: str, reads: str | None
) -> None:
    (project / "k").write_text(line + "\n")
    result = classify("curl -K k http://x/", cwd=str(project))
    assert result.tier is Tier.DESTRUCTIVE, result
    if reads is not None:
        assert f"cannot tell what runs: curl reads its options from {reads}" in result.reasons, result


def test_an_equals_sign_on_the_command_line_is_read_as_curl_8_16_reads_it(project: Path) -> None:
    (project / "sock.cfg").write_text(f"unix-socket {DOCKER}\n")
    held_outside("curl --config=sock.cfg http://x/", str(project), deciding=True)
    held_outside(f"curl --expand-unix-socket={DOCKER} http://x/", str(project), deciding=True)
    held_outside("curl --expand-abstract-unix-socket=docker http://x/", str(project), deciding=True)
    reasons = classify("curl --expand-config={{cfg}} http://x/", cwd=str(project)).reasons
    assert reasons == ("cannot tell what runs: curl reads its options from --expand-config={{cfg}}",), reasons
    assert classify("curl --config=missing.cfg http://x/", cwd=str(project)).tier is Tier.MODERATE


# ---- a small differential fuzzer, seeded: what curl 7.88 ends up with, from pieces chosen at random

_SETOPT = re.compile(r'curl_easy_setopt\(hnd, CURLOPT_(UNIX_SOCKET_PATH|ABSTRACT_UNIX_SOCKET), "(.*)"\);')
_C_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "?": "?", '"': '"', "\\": "\\"}


def _c_string(text: str) -> str:
    """A string as --libcurl writes it in C: `\\t`, `\\x0b`, `\\013`."""

    def one(m: re.Match[str]) -> str:
        escape = m[1]
        if escape in _C_ESCAPES:
            return _C_ESCAPES[escape]
        return chr(int(escape[1:], 16)) if escape[0] == "x" else chr(int(escape, 8))

    return re.sub(r"\\(x[0-9a-fA-F]{2}|[0-7]{3}|.)", one, text)


def curls_sockets(project: Path) -> list[tuple[str, str]] | None:
    """The sockets curl would connect to with the file `k` (kind, path), as its --libcurl code sets
    them; it connects nowhere (the address is file:///dev/null). None when it wrote no code."""
    assert CURL is not None
    out = project.parent / "out.c"
    out.unlink(missing_ok=True)
    subprocess.run(  # noqa: S603 (curl from the PATH; reads /dev/null)
        [CURL, "-q", "-K", "k", "--libcurl", str(out), "-s", "-m", "5", "file:///dev/null"],
        cwd=project,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    if not out.exists():
        return None
    code = out.read_text(encoding="utf-8", errors="surrogateescape")
    return [(m[1], _c_string(m[2])) for m in _SETOPT.finditer(code)]


def _spelled(chance: random.Random, name: str) -> str:
    if chance.random() < 0.5:
        name = name[: chance.randint(2, len(name))]
    if chance.random() < 0.3:
        name = "".join(c.upper() if chance.random() < 0.5 else c for c in name)
    return chance.choice(["", "", "--"]) + name


def random_line(chance: random.Random, outside: str) -> str:
    blanks = " \t\v\f\r"
    pick = chance.random()
    if pick < 0.3:
        return chance.choice(["silent", "-s", "# unix-socket /x", "", "header", "compressed", "-K", "verbose"])
    if pick < 0.45:
        cluster = "-" + "".join(chance.choice("svkf0h*:") for _ in range(chance.randint(0, 2))) + "K"
        return cluster + chance.choice(["k_sock", "k_plain", " k_sock", '\t"k_sock"', "k_missing"])
    option = chance.choice(["unix-socket", "unix-socket", "abstract-unix-socket", "config"])
    name = _spelled(chance, option)
    dashed = name.startswith("-")
    gap = "".join(chance.choice(blanks if dashed else blanks + "=:") for _ in range(chance.randint(1, 2)))
    if option == "config":  # not app.sock: curl would wait on the FIFO
        value = chance.choice(["k_sock", "k_plain", '"k_sock"', '""', "k_missing"])
    else:
        value = chance.choice([outside, "app.sock", "./app.sock", '""', '"', '"app.sock"', f'"{outside}"'])
    if value.startswith('"') and len(value) > 2 and chance.random() < 0.3:
        value = value.replace("a", "\\a", 1).replace("/", "\\/", 1)
    return name + gap + value + chance.choice(["", "", " # c", " app.sock", '" x'])


@needs_curl
def test_random_files_reach_no_socket_we_do_not_see(project: Path) -> None:
    chance = random.Random(20261205)
    outside = str(project.parent / "out.sock")
    (project / "k_sock").write_text(f"unix-socket {outside}\n")
    (project / "k_plain").write_text("silent\n")
    own = os.path.realpath(project / "app.sock")
    missed, compared = [], 0
    for _ in range(120):
        lines = [random_line(chance, outside) for _ in range(chance.randint(1, 4))]
        text = "".join(line + chance.choice(["\n", "\n", "\r\n", "\r"]) for line in lines)
        if chance.random() < 0.2:
            text = text.rstrip("\r\n")
        (project / "k").write_bytes(text.encode())
        sockets = curls_sockets(project)
        if sockets is None:
            continue
        compared += 1
        out = any(kind.startswith("ABSTRACT") or os.path.realpath(project / path) != own for kind, path in sockets)
        if out and not held("curl -q -K k http://x/", project):
            missed.append((text, sockets))
    assert compared > 100  # curl wrote its code for (nearly) each
    assert not missed, missed
