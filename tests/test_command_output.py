"""A command's output as the model gets it: the budget, the markers, the whole-output file, code pages."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from app.core.execution.output import (
    DEFAULT_BUDGET_CHARS,
    CommandOutput,
    OutputBudget,
    budget_from,
    fair_shares,
    parse_budget,
)
from app.core.execution.output_decoding import StreamDecoder, code_pages_for, decode_output
from app.core.execution.output_files import OutputSpool, prune_outputs
from app.core.paths import AppPaths, output_folder_for

SEQ = "".join(f"{n}\n" for n in range(1, 100_001)).encode()


def feed_in_chunks(output: CommandOutput, stream: int, data: bytes, size: int = 65_536) -> None:
    for start in range(0, len(data), size):
        output.feed(stream, data[start : start + size])


# -- code pages ------------------------------------------------------------------------------------


def test_windows_text_in_cp1252_cp437_and_gbk_is_read_with_the_console_code_pages() -> None:
    assert decode_output("café crème".encode("cp1252"), ("cp1252",)) == "café crème"
    assert decode_output("┌─ Verzeichnis ─┐ Größe".encode("cp437"), ("cp437", "cp1252")) == "┌─ Verzeichnis ─┐ Größe"
    assert decode_output("编译成功，没有错误".encode("gbk"), ("cp936", "cp936")) == "编译成功，没有错误"


def test_the_ansi_code_page_reads_what_the_oem_code_page_cannot() -> None:
    ansi_only = "naïve € 100".encode("cp1252")  # 0x80 (€) is no valid GBK text on its own
    assert decode_output(ansi_only, ("cp936", "cp1252")) == "naïve € 100"


def test_valid_utf8_stays_utf8_and_each_line_is_judged_on_its_own() -> None:
    assert decode_output("日本語 ✓".encode(), ("cp437",)) == "日本語 ✓"
    mixed = "git: ✓ merged\n".encode() + "dir: Größe\n".encode("cp437")
    assert decode_output(mixed, ("cp437",)) == "git: ✓ merged\ndir: Größe\n"


def test_without_code_pages_bytes_that_are_not_utf8_become_replacement_characters() -> None:
    assert decode_output(b"caf\xe9", ()) == "caf\ufffd"
    assert decode_output(b"\xff\xfe", ("cp936",)) == "\ufffd\ufffd"


def test_only_windows_has_code_pages_to_try_and_never_utf8_or_one_twice() -> None:
    assert code_pages_for("linux", 437, 1252) == ()
    assert code_pages_for("darwin", 437, 1252) == ()
    assert code_pages_for("win32", 437, 1252) == ("cp437", "cp1252")
    assert code_pages_for("win32", 936, 936) == ("cp936",)
    assert code_pages_for("win32", 65001, 1252) == ("cp1252",)
    assert code_pages_for("win32", 99999, None) == ()


def test_a_character_split_between_chunks_is_decoded_whole() -> None:
    decoder = StreamDecoder()
    data = "日本語 ✓\n".encode()
    assert "".join(decoder.decode(data[i : i + 1]) for i in range(len(data))) == "日本語 ✓\n"


# -- the budget ------------------------------------------------------------------------------------


def test_a_stream_that_needs_less_than_half_gives_the_rest_to_the_other() -> None:
    assert fair_shares([100, None], 30_000) == [100, 29_900]
    assert fair_shares([None, None], 30_000) == [15_000, 15_000]
    assert fair_shares([20_000, 20_000], 30_000) == [15_000, 15_000]
    assert fair_shares([10, 20], 30_000) == [10, 20]


def test_long_output_is_cut_to_the_budget_at_line_boundaries_with_a_marker_naming_the_lines() -> None:
    output = CommandOutput(OutputBudget(DEFAULT_BUDGET_CHARS))
    feed_in_chunks(output, 0, SEQ)
    output.feed(1, b"warning: one\n")
    stdout, stderr = output.finish().texts
    assert len(stdout) + len(stderr) <= DEFAULT_BUDGET_CHARS
    assert stderr == "warning: one\n", "a short stream is kept whole"
    assert stdout.startswith("1\n2\n3\n") and stdout.endswith("99999\n100000\n")
    head, marker, tail = stdout.partition("[... stdout lines ")
    assert head.endswith("\n") and tail.split("\n", 1)[1].split("\n")[0].isdigit(), "cut at line boundaries"
    first, last = (int(n.replace(",", "")) for n in tail.split(" ", 1)[0].split("-"))
    assert first == head.count("\n") + 1
    assert last == 100_000 - tail.split("\n", 1)[1].count("\n")
    assert "bytes) left out here; the whole output could not be kept" in stdout  # this one has no folder


def test_output_within_the_budget_comes_back_whole_and_leaves_no_file(tmp_path: Path) -> None:
    output = CommandOutput(OutputBudget(), tmp_path / "outputs")
    output.feed(0, b"hello\n")
    fitted = output.finish()
    assert fitted.texts == ["hello\n", ""] and fitted.output_file is None
    assert not list((tmp_path / "outputs").glob("*")) if (tmp_path / "outputs").exists() else True


def test_the_whole_output_goes_to_a_private_file_when_anything_was_left_out(tmp_path: Path) -> None:
    folder = tmp_path / "outputs"
    output = CommandOutput(OutputBudget(), folder, name="cmd7")
    for n in range(1, 100_001):  # stdout and stderr interleaved, as a terminal shows them
        output.feed(0, f"{n}\n".encode())
        if n % 10_000 == 0:
            output.feed(1, f"err {n}\n".encode())
    fitted = output.finish()
    path = Path(fitted.output_file)
    assert path.parent == folder and "cmd7" in path.name
    text = path.read_text()
    assert text.count("\n") == 100_010
    assert "10000\nerr 10000\n10001\n" in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert "the whole output is in outputFile" in fitted.texts[0]


def test_a_file_for_a_still_running_command_keeps_growing_until_it_ends(tmp_path: Path) -> None:
    output = CommandOutput(OutputBudget(2_000), tmp_path, labels=("output",))
    output.feed(0, SEQ[:50_000])
    early = output.snapshot()
    output.feed(0, SEQ[50_000:])
    final = output.finish()
    assert early.output_file == final.output_file
    assert Path(final.output_file).read_bytes() == SEQ


def test_the_file_keeps_the_first_bytes_of_each_stream_up_to_its_cap_and_then_the_end(tmp_path: Path) -> None:
    spool = OutputSpool(tmp_path, "cap", streams=1, cap_bytes=1000)
    spool.write(0, b"a" * 1500)
    spool.close(True, [("stdout", b"THE-END\n")])
    text = spool.path.read_text()
    assert text.startswith("a" * 1000 + "\n[... 500 bytes of stdout not kept in this file")
    assert text.endswith("its last 8 bytes follow ...]\nTHE-END\n")


def test_a_folder_that_cannot_be_written_is_said_in_the_marker_and_nothing_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("")
    output = CommandOutput(OutputBudget(2_000), blocker / "outputs")
    feed_in_chunks(output, 0, SEQ)
    fitted = output.finish()
    assert fitted.output_file is None
    assert "the whole output could not be kept (could not create a file in" in fitted.texts[0]


def test_the_seed_budget_keeps_a_mebibyte_per_stream_with_the_seed_marker() -> None:
    output = CommandOutput(OutputBudget(None))
    feed_in_chunks(output, 0, b"y" * 3_000_000)
    stdout = output.finish().texts[0]
    assert "1,951,424 bytes of stdout omitted here" in stdout
    assert stdout.endswith("[stdout truncated at 1MB]")


def test_a_character_cut_at_the_edge_of_what_is_kept_is_never_split_into_garbage() -> None:
    output = CommandOutput(OutputBudget(2_000))
    output.feed(0, ("€" * 10_000).encode())  # 30,000 bytes: more than the 8,000 kept at each end
    stdout = output.finish().texts[0]
    assert "\ufffd" not in stdout and stdout.startswith("€€€") and stdout.endswith("€€€")


def test_the_newest_line_is_the_last_one_that_is_not_blank_and_a_progress_bar_shows_its_latest_state() -> None:
    output = CommandOutput()
    output.feed(0, b"compiling a.c\ncompiling b.c\n\n")
    assert output.latest_line() == "compiling b.c"
    output.feed(1, b"downloading 10%\rdownloading 55%\r")
    assert output.latest_line() == "downloading 55%"


def test_the_budget_comes_from_the_environment_then_the_setting_then_the_default() -> None:
    env = "COWORK_TERMINAL_OUTPUT_BUDGET"
    assert budget_from(None, {}) == OutputBudget(30_000)
    assert budget_from(50_000, {}) == OutputBudget(50_000)
    assert budget_from(50_000, {env: "seed"}) == OutputBudget(None)
    assert budget_from("seed", {env: "8,000"}) == OutputBudget(8_000)
    assert budget_from(50_000, {env: "lots"}) == OutputBudget(50_000), "a value that does not parse is not set"
    assert parse_budget("100_000") == OutputBudget(100_000)
    for bad in ("10", "0", True, 3.5, "many"):
        with pytest.raises(ValueError):
            parse_budget(bad)


# -- where the files live, and for how long ----------------------------------------------------------


@pytest.mark.parametrize(
    ("platform", "home", "data", "logs", "environ"),
    [
        (
            "linux",
            "/home/ann",
            "/home/ann/.local/share/cowork-terminal",
            "/home/ann/.local/state/cowork-terminal/log",
            {},
        ),
        (
            "linux",
            "/home/ann",
            "/home/ann/.local/share/cowork-terminal",
            "/home/ann/.local/state/cowork-terminal/log",
            {"XDG_CACHE_HOME": "/var/cache/ann"},
        ),
        (
            "darwin",
            "/Users/ann",
            "/Users/ann/Library/Application Support/cowork-terminal",
            "/Users/ann/Library/Logs/cowork-terminal",
            {},
        ),
        (
            "win32",
            "C:/Users/ann",
            "C:/Users/ann/AppData/Local/cowork-terminal",
            "C:/Users/ann/AppData/Local/cowork-terminal/Logs",
            {"LOCALAPPDATA": "C:/Users/ann/AppData/Local"},
        ),
    ],
)
def test_whole_outputs_live_outside_the_guarded_folders_and_outside_appdata_on_windows(
    platform: str, home: str, data: str, logs: str, environ: dict[str, str]
) -> None:
    folder = output_folder_for(platform, environ, Path(home)).as_posix()
    for guarded in (data, logs):
        assert not folder.startswith(guarded + "/") and folder != guarded
    if platform == "win32":
        assert "/AppData/" not in folder
    if "XDG_CACHE_HOME" in environ:
        assert folder.startswith("/var/cache/ann/")


def test_with_an_app_home_the_outputs_go_beside_it_not_inside_it(home: Path) -> None:
    paths = AppPaths.from_environment()
    assert paths.outputs == Path(f"{home}-outputs")
    assert not paths.outputs.is_relative_to(paths.data_dir)


def test_retention_removes_old_output_files_then_the_oldest_over_the_size_cap_and_never_a_link(
    tmp_path: Path,
) -> None:
    now = time.time()
    ages_days = {"old.log": 8, "a.log": 3, "b.log": 2, "c.log": 1}
    for name, age in ages_days.items():
        path = tmp_path / name
        path.write_bytes(b"x" * 100)
        os.utime(path, (now - age * 86_400, now - age * 86_400))
    keep = tmp_path / "notes.txt"
    keep.write_text("not ours")
    os.utime(keep, (now - 30 * 86_400, now - 30 * 86_400))
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "precious.log").write_text("keep me")
    (tmp_path / "link.log").symlink_to(target / "precious.log")
    assert prune_outputs(tmp_path, max_age_days=7, max_bytes=250, now=now) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.log", "c.log", "elsewhere", "link.log", "notes.txt"]
    assert (target / "precious.log").read_text() == "keep me"


def test_reading_an_output_file_in_the_platforms_own_places_is_not_held_but_the_data_folder_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.core.classifier import Tier, classify

    monkeypatch.delenv("COWORK_TERMINAL_HOME", raising=False)
    paths = AppPaths.from_environment({})  # the user's real layout, not a test home
    guarded = [str(paths.data_dir), str(paths.log_dir)]
    output_file = paths.outputs / "20261130-101500-cmd42-a1b2c3.log"
    for command in (
        f"tail -n 50 {output_file}",
        f"grep -n error '{output_file}'",
        f"sed -n 10,20p {output_file}",
        "tail ~/" + str(output_file.relative_to(Path.home())),
    ):
        assert classify(command, cwd=str(Path.home()), protected_paths=guarded).tier is not Tier.DESTRUCTIVE, command
    assert classify(f"tail {paths.journal}", protected_paths=guarded).tier is Tier.DESTRUCTIVE


def test_what_a_session_program_prints_after_typed_keys_stays_within_the_budget(tmp_path: Path) -> None:
    from app.core.execution.shell_session import RunningCommand

    running = RunningCommand("0" * 16, CommandOutput(OutputBudget(2_000), tmp_path, labels=("output",)))
    before = running.output_len
    for n in range(1, 20_001):
        running.append(f"{n}\n")
    answer = running.output_since(before)
    assert len(answer) <= 2_000 and answer.endswith("19999\n20000\n")
    assert answer.startswith("[... the start of this output was left out; the whole output is in ")
    whole = Path(answer.split("the whole output is in ", 1)[1].split(" ...]", 1)[0])
    assert whole.read_text().startswith("1\n2\n3\n")
