"""What reading a repository's index may cost the classifier (repository._read_gitlinks and
_parse_index, reached from `git status` through git_settings._submodules_run), and keys typed into
the session judged off the event loop when long.

Red team eight (B), 2026-12-05: an index of one gitlink and then 8 million empty "optional"
extensions (64 MiB, dated 2030 so that nothing read was kept) held the classifier 3.5 s an index, on
the command host's one loop. Past each bound (repository.MAX_INDEX_*) the reader gives up, and the
command is judged as where an index cannot be read: which repositories git runs in cannot be told,
moderate for `git status`, never safe. An ordinary index with a submodule is read as before."""

from __future__ import annotations

import functools
import os
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core.classifier import Tier, classify, repository
from tests.test_classifier_places import committed, with_repository_in_place
from tests.test_read_only import git
from tests.test_read_only_judgement_cd import with_plain_submodule

BOUND_S = 0.05  # what reading one crafted index may take, past what reading its bytes does


def entry(path: bytes, *, gitlink: bool = False, version: int = 2, drop: bytes = b"\0") -> bytes:
    """One index entry (git's gitformat-index): a version 2 one padded to 8 bytes; a version 4 one
    with its path as what `drop` (a number as git writes it) drops of the one before, then `path`."""
    mode = 0o160000 if gitlink else 0o100644
    head = struct.pack(">10I", 0, 0, 0, 0, 0, 0, mode, 0, 0, 0) + bytes([230]) * 20
    if version == 4:
        return head + struct.pack(">H", 0xFFF) + drop + path + b"\0"
    made = head + struct.pack(">H", min(len(path), 0xFFF)) + path
    return made + bytes(8 - len(made) % 8)


def index(entries: list[bytes], *, version: int = 2, count: int | None = None, rest: bytes = b"") -> bytes:
    head = b"DIRC" + struct.pack(">II", version, len(entries) if count is None else count)
    return head + b"".join(entries) + rest + bytes(20)


def red_teams_index(mib: int) -> bytes:
    """The red team's (tests/test_red_team_eight_control.index_maker): one gitlink `sub`, then empty
    extensions `Aaaa` of 8 bytes each to `mib` MiB."""
    start = index([entry(b"sub", gitlink=True)])[:-20]
    return start + b"Aaaa".ljust(8, b"\0") * (((mib << 20) - len(start) - 20) // 8) + bytes(20)


def repository_with(folder: Path, data: bytes) -> Path:
    """`folder`, a repository whose index is `data`, dated in the future as the red team's was."""
    folder.mkdir(parents=True)
    git(folder, "init", "-q")
    written = folder / ".git" / "index"
    written.write_bytes(data)
    future = time.time() + 5 * 365 * 86400
    os.utime(written, (future, future))
    return folder


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    done = work()
    return time.perf_counter() - started, done


def fails_within(data: bytes, said: str) -> float:
    """How long _parse_index took to give `data` up as an index it does not read (saying `said`)."""
    started = time.perf_counter()
    with pytest.raises(ValueError, match=said):
        repository._parse_index(data, 20)
    return time.perf_counter() - started


# -- crafted indexes: the reader gives up within its bound, and the command is not judged safe -----------


@pytest.mark.parametrize("mib", [16, 64])
def test_the_red_teams_index_of_empty_extensions_is_given_up_at_once_and_not_judged_safe(
    tmp_path: Path, mib: int
) -> None:
    data = red_teams_index(mib)
    assert fails_within(data, "more than 64 extensions") < BOUND_S  # 3.5 s for 64 MiB before
    top = repository_with(tmp_path / "r", data)
    for copy in ("r2", "r3"):  # hard links, each read afresh (the red team's r2..r4)
        (tmp_path / copy / ".git").mkdir(parents=True)
        os.link(top / ".git" / "index", tmp_path / copy / ".git" / "index")
        git(tmp_path / copy, "init", "-q")
    took = []
    for name in ("r", "r2", "r3"):
        seconds, verdict = timed(functools.partial(classify, f"git -C {name} status", cwd=str(tmp_path)))
        assert verdict.tier is Tier.MODERATE, verdict
        assert "cannot tell which repository's settings it reads" in verdict.reasons[0], verdict
        assert "more than 64 extensions" in verdict.reasons[0], verdict
        took.append(seconds)
    # what is left is reading the file itself (read_regular: about 75 ms for 64 MiB here)
    assert min(took) < BOUND_S * (1 + mib // 8), took


def test_an_index_larger_than_the_bound_is_not_read_at_all(tmp_path: Path) -> None:
    top = repository_with(tmp_path / "r", red_teams_index(1))
    with open(top / ".git" / "index", "r+b") as grown:
        grown.truncate(repository.MAX_INDEX_BYTES + 1)  # sparse: nothing of it is on the disk
    real = os.path.realpath(top / ".git" / "index")
    opened: list[str] = []

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event == "open" and args and isinstance(args[0], str) and os.path.realpath(args[0]) == real:
            opened.append(args[0])

    sys.addaudithook(hook)  # cannot be removed: it only notes the opens of this test's index
    seconds, verdict = timed(lambda: classify("git status", cwd=str(top)))
    assert verdict.tier is Tier.MODERATE and "larger than 64 MiB" in verdict.reasons[0], verdict
    assert opened == [], "told by its size, not read"
    assert seconds < 1.0


def gitlinks(count: int) -> list[bytes]:
    return [entry(b"m%05d" % number, gitlink=True) for number in range(count)]


@pytest.mark.parametrize(
    ("data", "said"),
    [
        # the header's count past MAX_INDEX_ENTRIES: given up before a step is taken
        (
            index([entry(b"sub", gitlink=True)], count=repository.MAX_INDEX_ENTRIES + 1),
            f"more than {repository.MAX_INDEX_ENTRIES} entries",
        ),
        # version 4: an 8 MiB path, then 2000 gitlinks each keeping it (47 s before: each copied it)
        (
            index([entry(b"a" * (8 << 20), version=4)] + [entry(b"b", gitlink=True, version=4)] * 2000, version=4),
            "a path longer than 4096 bytes",
        ),
        # version 4: how much of the path before to drop, in a run of 1 MiB of 0xff bytes (minutes before)
        (
            index(
                [entry(b"sub", gitlink=True, version=4), entry(b"x", version=4, drop=b"\xff" * (1 << 20) + b"\0")],
                version=4,
            ),
            "a path shorter than it drops",
        ),
        (index(gitlinks(repository.MAX_INDEX_GITLINKS + 1)), "more than 1000 submodules"),
        (index([entry(b"sub", gitlink=True)], rest=b"TREE\0\0\0\0" * 65), "more than 64 extensions"),
    ],
    ids=["entries", "a long version 4 path", "a long drop", "gitlinks", "extensions"],
)
def test_a_crafted_index_is_given_up_within_the_bound_and_the_command_is_not_judged_safe(
    tmp_path: Path, data: bytes, said: str
) -> None:
    assert fails_within(data, said) < BOUND_S
    top = repository_with(tmp_path / "r", data)
    verdict = classify("git status", cwd=str(top))
    assert verdict.tier is Tier.MODERATE, verdict
    assert "cannot tell which repository's settings it reads" in verdict.reasons[0] and said in verdict.reasons[0]


def test_within_the_bounds_every_gitlink_is_still_found(tmp_path: Path) -> None:
    """Many entries (a big repository), and as many gitlinks and extensions as the bounds let through:
    read, each gitlink found."""
    many = [entry(b"f%07d" % number) for number in range(200_000)]  # past the 100_000 the bound once was
    data = index([*gitlinks(repository.MAX_INDEX_GITLINKS), *many], rest=b"TREE\0\0\0\0" * 64)
    links, extensions = repository._parse_index(data, 20)
    assert len(links) == repository.MAX_INDEX_GITLINKS and list(extensions) == [b"TREE"]
    path = b"d/" * 2047  # 4094 bytes, then a gitlink under it: version 4 builds it on the path before
    links, _ = repository._parse_index(
        index([entry(path, version=4), entry(b"ab", gitlink=True, version=4)], version=4), 20
    )
    assert links == [(path + b"ab").decode()]


# -- an ordinary index with a submodule: read as before ------------------------------------------------


@pytest.mark.parametrize("version", ["2", "3", "4"])
@pytest.mark.parametrize("files", [0, 3000])
def test_an_ordinary_index_with_a_repository_in_place_is_read_as_before(
    tmp_path: Path, version: str, files: int
) -> None:
    marker = tmp_path / "pwned"
    top = with_repository_in_place(tmp_path / "top", marker)
    for number in range(files):
        (top / f"src{number % 30}").mkdir(exist_ok=True)
        (top / f"src{number % 30}" / f"file{number}.txt").write_text(f"{number}\n")
    if files:
        git(top, "add", ".")
        committed(top, "many")
    git(top, "update-index", "--index-version", version)
    seconds, verdict = timed(lambda: classify("git status", cwd=str(top)))
    assert verdict.tier is Tier.MODERATE and "inner: core.fsmonitor" in verdict.reasons[0], verdict
    assert seconds < 1.0
    git(top / "inner", "config", "--unset", "core.fsmonitor")
    for command in ("git status", "git diff", "git status --short", "git -C inner status", "git log --oneline"):
        assert classify(command, cwd=str(top)).tier is Tier.SAFE, command


@pytest.mark.parametrize(
    "command", ["git status", "git diff", "git status --short", "git -C lib status", "git log --oneline -3"]
)
def test_everyday_git_in_a_repository_with_a_submodule_is_judged_as_before(tmp_path: Path, command: str) -> None:
    top = with_plain_submodule(tmp_path, tmp_path / "pwned")
    assert classify(command, cwd=str(top)).tier is Tier.SAFE, command


def test_an_index_dated_in_the_future_is_kept_once_settled(tmp_path: Path) -> None:
    """`touch -d 2030-01-01 .git/index` (the red team's) made every command read it again: a write
    dates it now and changes its ctime, so it is kept as any other is."""
    marker = tmp_path / "pwned"
    top = with_repository_in_place(tmp_path / "top", marker)
    index_file = top / ".git" / "index"
    real = os.path.realpath(index_file)
    opened: list[str] = []

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event == "open" and args and isinstance(args[0], str) and os.path.realpath(args[0]) == real:
            opened.append(args[0])

    sys.addaudithook(hook)  # cannot be removed: it only notes the opens of this test's index
    subprocess.run(["touch", "-d", "2030-01-01", str(index_file)], check=True)  # noqa: S607
    time.sleep(1.1)  # its ctime settled (a change within one tick of the clock)
    for _ in range(2):
        assert "inner: core.fsmonitor" in classify("git status", cwd=str(top)).reasons[0]
    assert len(opened) == 1, opened
    git(top, "rm", "-q", "--cached", "inner")  # a new index, dated again as before
    subprocess.run(["touch", "-d", "2030-01-01", str(index_file)], check=True)  # noqa: S607
    assert classify("git status", cwd=str(top)).tier is Tier.SAFE  # read again: its ctime is new
    assert len(opened) == 2, opened


# -- keys typed into the session ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_long_keys_are_judged_on_a_worker_thread_and_short_ones_on_the_loop(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As execute_command's (admission.CLASSIFY_ON_A_THREAD_CHARS): a long line does not hold the loop
    that runs every other call and the pause."""
    import app.core.commands.session_shell as session_shell
    from app.core.commands.admission import CLASSIFY_ON_A_THREAD_CHARS
    from tests.in_process_server import serving
    from tests.test_sessions import call

    judged_on: list[tuple[int, int]] = []
    real = session_shell.classify_typed

    def noted(line: str, *args: Any, **kwargs: Any) -> Any:
        judged_on.append((len(line), threading.get_ident()))
        return real(line, *args, **kwargs)

    monkeypatch.setattr(session_shell, "classify_typed", noted)
    loop = threading.get_ident()
    async with serving(home) as client:
        waiting = await call(client, "terminal_run", {"command": "read -r a; read -r b; echo ${#a} $b", "timeout": 300})
        assert waiting["timedOut"] is True
        short = await call(client, "terminal_send_keys", {"keys": "x" * 10 + "\n"})
        long = await call(client, "terminal_send_keys", {"keys": "y" * CLASSIFY_ON_A_THREAD_CHARS + "\n"})
    assert "error" not in short and "error" not in long, (short, long)
    [(short_len, short_on), (long_len, long_on)] = judged_on
    assert short_len == 11 and short_on == loop
    assert long_len == CLASSIFY_ON_A_THREAD_CHARS + 1 and long_on != loop
