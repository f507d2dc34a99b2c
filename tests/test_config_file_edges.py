"""Claude Desktop's config at its edges: the file changed by Claude Desktop between our read and our
write, problems reported where they really are, and messages in JSON's words and the user's language.

Real files under tmp_path (HOME there too). Claude Desktop writing "at the right moment" is played
by a profile function that writes the file each time `read_config` returns: our code runs as it is,
single-threaded, so the race happens at exactly that point on every run.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from app.core import atomic_file, i18n
from app.core.claude import config as cc
from app.core.claude import config_file

ENTRY = cc.build_entry(False, "/opt/cowork/venv/bin/python")
OTHER = {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}}
OURS_AND_OTHER = {**OTHER, cc.SERVER_NAME: ENTRY}


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home" / ".config" / "Claude" / "claude_desktop_config.json"


def write(path: Path, data: dict[str, Any] | str) -> bytes:
    """Write a config as Claude Desktop does (compact JSON) and give back its bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = (data if isinstance(data, str) else json.dumps(data)).encode("utf-8")
    path.write_bytes(raw)
    return raw


def leftovers(path: Path) -> list[str]:
    """Backups and temporary files next to the config: none after a refused change."""
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


@contextmanager
def claude_writes_after_each_read(path: Path, versions: list[dict[str, Any] | None]) -> Iterator[list[Any]]:
    """Claude Desktop saving its preferences right after each of our reads: when `read_config`
    returns for the n-th time, `versions[n]` is written (None: the file is deleted). Yields what is
    still to be written, so a test can tell how many reads there were."""
    pending = list(versions)

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "return" and frame.f_code is config_file.read_config.__code__ and pending:
            version = pending.pop(0)
            if version is None:
                path.unlink()
            else:
                write(path, version)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield pending
    finally:
        sys.setprofile(previous)


# --- 1. Claude Desktop writes the file between our read and our write ------------------------


def test_save_refuses_a_file_another_program_wrote_after_it_was_read(config: Path) -> None:
    """Text made from the old content would put back the old `theme` and drop `newPref`."""
    write(config, {"theme": "light", "mcpServers": OTHER})
    doc = config_file.read_config(config)
    theirs = write(config, {"theme": "dark", "newPref": 1, "mcpServers": OTHER})
    text = config_file.render_config({**doc.data, "mcpServers": OURS_AND_OTHER})
    with pytest.raises(config_file.ConfigChangedError, match="changed by another program") as caught:
        config_file.save(doc, text)
    assert caught.value.path == config
    assert config.read_bytes() == theirs and leftovers(config) == []


def test_save_refuses_a_file_created_or_deleted_after_it_was_read(config: Path) -> None:
    """Absent at the read and there at the write (or the other way round) is a change too."""
    doc = config_file.read_config(config)
    theirs = write(config, {"theme": "dark"})
    with pytest.raises(config_file.ConfigChangedError):
        config_file.save(doc, config_file.render_config({"mcpServers": {cc.SERVER_NAME: ENTRY}}))
    assert config.read_bytes() == theirs and leftovers(config) == []

    doc = config_file.read_config(config)
    config.unlink()
    with pytest.raises(config_file.ConfigChangedError):
        config_file.save(doc, config_file.render_config({"mcpServers": {cc.SERVER_NAME: ENTRY}}))
    assert not config.exists() and leftovers(config) == []


@pytest.mark.parametrize("races", [1, cc.SAVE_ATTEMPTS - 1])
def test_connect_starts_over_from_what_claude_desktop_wrote_and_keeps_its_keys(config: Path, races: int) -> None:
    write(config, {"theme": "light", "mcpServers": OTHER})
    versions: list[dict[str, Any] | None] = [
        {"theme": f"dark {n}", "newPref": n, "mcpServers": OTHER} for n in range(1, races + 1)
    ]
    with claude_writes_after_each_read(config, versions) as pending:
        change = cc.connect_desktop(config, ENTRY)
    assert pending == []
    assert change.action == "written" and change.previous == cc.ABSENT
    assert json.loads(config.read_bytes()) == {"theme": f"dark {races}", "newPref": races, "mcpServers": OURS_AND_OTHER}
    assert change.backup is not None and cc.list_backups(config) == [Path(change.backup)]
    assert json.loads(Path(change.backup).read_bytes()) == versions[-1], "the backup is of what was replaced"


def test_connect_to_a_file_claude_desktop_creates_meanwhile_keeps_what_it_wrote(config: Path) -> None:
    with claude_writes_after_each_read(config, [{"theme": "dark"}]):
        cc.connect_desktop(config, ENTRY)
    assert json.loads(config.read_bytes()) == {"theme": "dark", "mcpServers": {cc.SERVER_NAME: ENTRY}}


def test_disconnect_starts_over_too(config: Path) -> None:
    write(config, {"theme": "light", "mcpServers": OURS_AND_OTHER})
    with claude_writes_after_each_read(config, [{"theme": "dark", "newPref": 1, "mcpServers": OURS_AND_OTHER}]):
        assert cc.disconnect_desktop(config, ENTRY).action == "removed"
    assert json.loads(config.read_bytes()) == {"theme": "dark", "newPref": 1, "mcpServers": OTHER}


def test_a_symlinked_config_changed_meanwhile_stays_a_symlink_with_both_changes(tmp_path: Path, config: Path) -> None:
    target = tmp_path / "dotfiles" / "claude.json"
    write(target, {"theme": "light", "mcpServers": OTHER})
    config.parent.mkdir(parents=True)
    config.symlink_to(target)
    with claude_writes_after_each_read(target, [{"theme": "dark", "mcpServers": OTHER}]):
        cc.connect_desktop(config, ENTRY)
    assert config.is_symlink()
    assert json.loads(target.read_bytes()) == {"theme": "dark", "mcpServers": OURS_AND_OTHER}


@pytest.mark.parametrize(
    ("act", "servers"),
    [
        (lambda path: cc.connect_desktop(path, ENTRY), OTHER),
        (lambda path: cc.disconnect_desktop(path, ENTRY), OURS_AND_OTHER),
    ],
    ids=["connect", "disconnect"],
)
def test_a_file_that_keeps_changing_is_refused_and_left_as_the_other_program_wrote_it(
    config: Path, act: Callable[[Path], cc.ConfigChange], servers: dict[str, Any]
) -> None:
    write(config, {"n": 0, "mcpServers": servers})
    config.chmod(0o640)
    versions: list[dict[str, Any] | None] = [{"n": n, "mcpServers": servers} for n in range(1, cc.SAVE_ATTEMPTS + 1)]
    refused = pytest.raises(config_file.ConfigChangedError, match="Wait a moment, or quit Claude Desktop")
    with claude_writes_after_each_read(config, versions) as pending, refused:
        act(config)
    assert pending == [], f"read {cc.SAVE_ATTEMPTS} times, no more"
    assert json.loads(config.read_bytes()) == versions[-1]
    assert leftovers(config) == [] and os.stat(config).st_mode & 0o777 == 0o640


# --- 2. a problem is reported where it is, not where the same words first appear -------------

DUPLICATE_IN_THIRD = """{
  "mcpServers": {
    "a": {"command": "x"},
    "b": {"command": "y"},
    "c": {
      "command": "z", "command": "w"
    }
  }
}"""


@pytest.mark.parametrize(
    ("content", "problem", "line", "column"),
    [
        (DUPLICATE_IN_THIRD, "'command' appears twice", 6, 34),
        ('{"x": {"a": 1},\n "a": 1, "a": 2}', "'a' appears twice", 2, 15),
        ('{"note": "is NaN here",\n "zoom": NaN}', "NaN is not valid JSON", 2, 10),
        ('{"note": "1e400 stars",\n "big": 1e400}', "the number 1e400 is too large", 2, 9),
        ('{"profile": {"mcpServers": {}},\n "mcpServers": null}', '"mcpServers" must be an object', 2, 16),
    ],
)
def test_a_problem_is_reported_at_its_own_line_and_column(
    config: Path, content: str, problem: str, line: int, column: int
) -> None:
    original = write(config, content)
    with pytest.raises(config_file.ConfigFileError, match=problem) as caught:
        cc.connect_desktop(config, ENTRY)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert f"line {line}, column {column}" in str(caught.value)
    assert config.read_bytes() == original and leftovers(config) == []


# --- 3. JSON's words, in the user's language --------------------------------------------------


@pytest.fixture
def speaking() -> Iterator[Callable[[str], None]]:
    """Switch this test process's language; English again afterwards."""
    yield i18n.use_language
    i18n.use_language("en")


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("null", "not null"),
        ('["cowork-terminal"]', "not an array, [ ... ]"),
        ('"none"', 'not a text, "..."'),
        ("3", "not a number"),
        ("false", "not false"),
    ],
)
def test_mcp_servers_of_another_type_is_named_in_jsons_words(config: Path, value: str, words: str) -> None:
    write(config, '{"mcpServers": ' + value + "}")
    with pytest.raises(config_file.ConfigFileError) as caught:
        cc.connect_desktop(config, ENTRY)
    assert caught.value.problem == '"mcpServers" must be an object, { ... }, ' + words


@pytest.mark.parametrize(
    ("language", "words"),
    [("de", "nicht ein Array, [ ... ]"), ("es", "no un array, [ ... ]"), ("ru", "а не массивом, [ ... ]")],
)
def test_the_type_is_named_in_the_users_language(
    config: Path, speaking: Callable[[str], None], language: str, words: str
) -> None:
    write(config, '{"mcpServers": []}')
    speaking(language)
    with pytest.raises(config_file.ConfigFileError) as caught:
        cc.connect_desktop(config, ENTRY)
    assert caught.value.problem.endswith(words)


@pytest.mark.parametrize(
    ("language", "lead_in"),
    [("en", "JSON syntax error: "), ("de", "JSON-Syntaxfehler: "), ("es", "error de sintaxis JSON: "),
     ("ru", "ошибка синтаксиса JSON: ")],
)  # fmt: skip
def test_a_syntax_error_is_introduced_in_the_users_language_and_keeps_the_parsers_detail(
    config: Path, speaking: Callable[[str], None], language: str, lead_in: str
) -> None:
    """The decoder's detail has no translation, but it tells exactly what is wrong: it stays."""
    write(config, '{"mcpServers": {}')
    speaking(language)
    with pytest.raises(config_file.ConfigFileError) as caught:
        cc.connect_desktop(config, ENTRY)
    assert caught.value.problem == lead_in + "Expecting ',' delimiter"
    assert (caught.value.line, caught.value.column) == (1, 18)


def test_an_integer_too_long_for_python_is_refused_in_words_and_the_file_kept(config: Path) -> None:
    """A review, 2026-12-05: 5,000 digits made Python's int() raise a bare ValueError, which escaped
    as a traceback (and from the status code) instead of "cannot be read"."""
    text = '{"mcpServers": {}, "n": ' + "7" * 5000 + "}"
    write(config, text)
    with pytest.raises(config_file.ConfigFileError) as caught:
        cc.connect_desktop(config, ENTRY)
    assert caught.value.problem == "the number 777777777777… is too large"
    assert (caught.value.line, caught.value.column) == (1, 25)
    assert config.read_text() == text, "nothing was written"


# --- 4. red team nine (M): layout kept, late saves caught, files that are not regular files -----


@pytest.mark.parametrize(
    ("original", "indent", "newline"),
    [
        ('{"theme": "dark"}', "  ", "\n"),  # compact, as Claude Desktop writes it: 2 spaces as before
        ('{\n  "theme": "dark"\n}\n', "  ", "\n"),
        ('{\n    "theme": "dark"\n}\n', "    ", "\n"),
        ('{\n\t"theme": "dark"\n}\n', "\t", "\n"),
        ('{\r\n    "theme": "dark"\r\n}\r\n', "    ", "\r\n"),
    ],
)
def test_a_change_keeps_the_files_indent_and_line_ends(config: Path, original: str, indent: str, newline: str) -> None:
    write(config, original)
    cc.connect_desktop(config, ENTRY)
    text = config.read_bytes().decode()
    assert json.loads(text) == {"theme": "dark", "mcpServers": {cc.SERVER_NAME: ENTRY}}
    assert text.startswith("{" + newline + indent + '"theme"') and text.endswith("}" + newline)
    assert text.count("\n") == text.count(newline)


@pytest.mark.parametrize(
    ("original", "written"),
    [
        ('{\n  "name": "\u00e9t\u00e9"\n}\n', "\u00e9t\u00e9"),  # UTF-8 stays UTF-8
        ('{\n  "name": "\\u00e9t\\u00e9"\n}\n', "\\u00e9t\\u00e9"),  # an ASCII file with escapes stays so
        ('{\n  "name": "\\u0041"\n}\n', "A"),  # an ASCII escape is no sign of an escaping writer
    ],
)
def test_a_change_keeps_non_ascii_as_the_file_spells_it(config: Path, original: str, written: str) -> None:
    write(config, original)
    cc.connect_desktop(config, ENTRY)
    assert f'"name": "{written}"' in config.read_text("utf-8")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="tells the files apart through /proc")
def test_a_save_landing_during_the_new_files_fsync_is_refused_and_kept(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check runs inside write_atomic, after the temporary file's fsync (red team nine, route 6)."""
    write(config, {"theme": "light", "mcpServers": OTHER})
    doc = config_file.read_config(config)
    theirs = json.dumps({"theme": "dark", "mcpServers": OTHER}).encode()
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp"):  # our new file, not the backup
            config.write_bytes(theirs)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(config_file.ConfigChangedError):
        config_file.save(doc, config_file.render_config({**doc.data, "mcpServers": OURS_AND_OTHER}))
    monkeypatch.undo()
    assert config.read_bytes() == theirs and leftovers(config) == []


def test_write_atomic_without_a_check_replaces_as_before(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_bytes(b"old")
    atomic_file.write_atomic(target, b"new")
    assert target.read_bytes() == b"new" and sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_a_hard_linked_config_keeps_both_names_through_connect_and_disconnect(tmp_path: Path, config: Path) -> None:
    other_name = tmp_path / "dotfiles.json"
    write(other_name, {"theme": "dark", "mcpServers": OTHER})
    config.parent.mkdir(parents=True)
    os.link(other_name, config)
    cc.connect_desktop(config, ENTRY)
    assert json.loads(other_name.read_bytes())["mcpServers"] == OURS_AND_OTHER
    cc.disconnect_desktop(config, ENTRY)  # shorter than what it replaces: the old tail is cut off
    assert json.loads(other_name.read_bytes()) == {"theme": "dark", "mcpServers": OTHER}
    assert config.stat().st_ino == other_name.stat().st_ino and config.stat().st_nlink == 2


def test_a_failed_in_place_write_puts_the_old_bytes_back(
    tmp_path: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = write(config, {"theme": "dark", "mcpServers": OTHER})
    os.link(config, tmp_path / "dotfiles.json")
    real = config_file._write_in_place
    calls: list[bytes] = []

    def full_disk_once(path: Path, data: bytes) -> None:
        calls.append(data)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(config_file, "_write_in_place", full_disk_once)
    with pytest.raises(config_file.ConfigWriteError, match="not changed"):
        cc.connect_desktop(config, ENTRY)
    assert calls[1:] == [original] and config.read_bytes() == original
    assert config_file.list_backups(config) == []


def test_a_deeply_nested_config_is_refused_in_words_where_it_is_deepest(config: Path) -> None:
    text = '{"mcpServers": {},\n "layout": ' + "[" * 3000 + "]" * 3000 + "}"
    write(config, text)
    with pytest.raises(config_file.ConfigFileError, match="nested too deeply") as caught:
        cc.connect_desktop(config, ENTRY)
    assert (caught.value.line, caught.value.column) == (2, 3011)
    assert config.read_text() == text and leftovers(config) == []


@pytest.mark.skipif(os.name != "posix", reason="named pipes in the file system are POSIX's")
def test_a_fifo_is_refused_in_words_without_being_opened(config: Path) -> None:
    config.parent.mkdir(parents=True)
    os.mkfifo(config)
    with pytest.raises(config_file.ConfigFileError, match="not a regular file but a named pipe"):
        cc.connect_desktop(config, ENTRY)
    assert stat.S_ISFIFO(os.lstat(config).st_mode)


def test_a_file_that_stays_empty_is_still_an_empty_object(config: Path) -> None:
    write(config, "")
    assert config_file.read_config(config).data == {} and config_file.read_config(config).raw == b""
