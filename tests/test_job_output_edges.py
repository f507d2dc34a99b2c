"""Edges of what the job tools give the model (issue 22, a review's findings): paging through output
by character, output past 100 MB, an output file that could not be written or completed, the order
stdout and stderr came in, a job whose server ended, many jobs at once, and long waits.

Servers in this process (tests/in_process_server.py), reached by the SDK's client; the one server
that must end under its job is a real `serve` process (tests/stdio_client.py)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from app.core.commands.jobs import part_of, read_file_part
from app.core.commands.request import MAX_COUNT, CommandRefused, check_arguments, whole_number
from app.core.execution.output import CommandOutput, OutputBudget
from app.core.execution.output_files import FILE_CAP_BYTES
from app.core.journal.store import Journal, Status
from app.core.paths import AppPaths
from tests.small_disk import small_tmpfs
from tests.stdio_client import STOP_DEADLINE_S, live_processes
from tests.test_jobs import COWORK, SHORT_PATIENCE, call, client_named, named_here, wait_until_finished

pytestmark = pytest.mark.anyio


async def read_all(client: Any, job: int, limit: int) -> tuple[str, list[dict[str, Any]]]:
    """The whole output, paged with `limit` and nextOffset as a model would page it."""
    text, offset, pages = "", 0, []
    for _ in range(1000):
        said = await call(client, "command_output", {"jobId": job, "offset": offset, "limit": limit})
        assert "error" not in said, said
        pages.append(said)
        text += said["output"]
        if said["nextOffset"] >= said["totalBytes"]:
            return text, pages
        assert said["nextOffset"] > offset, f"no progress at offset {offset}: {said}"
        offset = said["nextOffset"]
    raise AssertionError("paging did not end")


# -- 1. characters are never cut -------------------------------------------------------------------


async def test_paging_with_next_offset_reads_every_character_once_whatever_the_limit(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with named_here(home, COWORK, monkeypatch, SHORT_PATIENCE) as client:
        running = await call(client, "execute_command", {"command": "printf 'ééééé'; sleep 2"})
        assert running["status"] == "running"
        ended = await call(client, "execute_command", {"command": "printf 'aé€😀'"})
        assert ended["status"] == "finished"
        for job, expected in ((running["jobId"], "ééééé"), (ended["jobId"], "aé€😀")):
            for limit in (1, 2, 3, 4, 5):
                text, pages = await read_all(client, job, limit)
                assert text == expected, (job, limit, pages)
                assert all("\ufffd" not in page["output"] for page in pages)
        middle = await call(client, "command_output", {"jobId": running["jobId"], "offset": 1, "limit": 4})
        assert (middle["output"], middle["offset"], middle["nextOffset"]) == ("éé", 2, 6), "starts at a character"
        one_line = await call(client, "command_output", {"jobId": running["jobId"], "tail": 1, "limit": 5})
        assert one_line["output"] == "éé" and one_line["offset"] == 6, "a tail over one long line"
        nothing = await call(client, "command_output", {"jobId": ended["jobId"], "offset": 1, "limit": 0})
        assert nothing["output"] == "" and nothing["nextOffset"] == nothing["offset"]


def test_a_part_waits_for_the_rest_of_a_character_still_being_written_and_bytes_not_utf8_are_cut_as_asked(
    tmp_path: Path,
) -> None:
    cut = "aé".encode()[:-1]  # a running command has printed half of "é"
    assert part_of(cut, 0, 100, None, growing=True) == (b"a", 0, 2)
    assert part_of(cut, 0, 100, None) == (cut, 0, 2), "an ended command's last byte is read as it is"
    assert part_of(cut, None, 100, 5, growing=True)[:2] == (b"a", 0)
    binary = b"\x80" * 10
    assert part_of(binary, 0, 4, None) == (b"\x80" * 4, 0, 10), "from 0 nothing was cut before"
    assert part_of("😀x".encode(), 0, 1, None)[0] == "😀".encode(), "one character, whatever the limit"
    file = tmp_path / "output.log"
    file.write_bytes("ab€".encode() * 1000)
    part, at, size = read_file_part(file, 3, 4, None)
    assert (part.decode(), at, size) == ("ab", 5, 5000), "from inside a character to before the one cut"
    assert read_file_part(file, None, 4, 10)[:2] == ("b€".encode(), 4996), "a tail over one long line"
    assert read_file_part(file, None, 2, 10)[:2] == (b"", 5000), "no whole character in the window"


# -- 2. output past 100 MB can be read to its end ---------------------------------------------------


def test_offsets_reach_past_the_largest_output_file() -> None:
    assert MAX_COUNT >= 2 * FILE_CAP_BYTES
    assert whole_number("offset", 2 * FILE_CAP_BYTES) == 2 * FILE_CAP_BYTES
    check_arguments("command_output", {"jobId": 1, "offset": 100_020_000, "limit": 30_000})
    with pytest.raises(CommandRefused, match=f"from 0 to {MAX_COUNT} "):
        whole_number("offset", MAX_COUNT + 1)


async def test_an_output_of_110_megabytes_is_read_to_its_end_with_next_offset(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = "head -c 60000000 /dev/zero | tr '\\0' a; head -c 50000000 /dev/zero | tr '\\0' b >&2"
    async with named_here(home, COWORK, monkeypatch) as client:
        started = await call(client, "execute_command", {"command": command, "background": True})
        done = await wait_until_finished(client, started["jobId"], seconds=60)
        assert done["exitCode"] == 0
        first = await call(client, "command_output", {"jobId": started["jobId"], "offset": 99_990_000, "limit": 30_000})
        assert first["totalBytes"] == 110_000_000 and first["nextOffset"] == 100_020_000
        after = await call(client, "command_output", {"jobId": started["jobId"], "offset": first["nextOffset"]})
        assert "error" not in after, after
        last = await call(client, "command_output", {"jobId": started["jobId"], "offset": 109_999_990})
    assert last["output"] == "b" * 10 and last["nextOffset"] == 110_000_000


# -- 3. a full disk: the output file is partial, and every answer says so ----------------------------


@pytest.fixture
def full_outputs(home: Path) -> Iterator[Path]:
    """The outputs folder of `home` on a 2 MiB tmpfs of its own (Linux, as root), unmounted afterwards."""
    with small_tmpfs(Path(f"{home}-outputs")) as folder:
        yield folder


async def test_on_a_full_disk_the_partial_output_file_is_said_and_command_output_reads_what_was_kept(
    home: Path, monkeypatch: pytest.MonkeyPatch, full_outputs: Path
) -> None:
    command = "head -c 4000000 /dev/zero | tr '\\0' x; echo; echo the-end; echo oops >&2"
    async with named_here(home, COWORK, monkeypatch) as client:
        started = await call(client, "execute_command", {"command": command, "background": True})
        done = await wait_until_finished(client, started["jobId"])
        read = await call(client, "command_output", {"jobId": started["jobId"]})
    assert done["exitCode"] == 0
    assert "the whole output is in outputFile" not in done["stdout"], done["stdout"][-600:]
    assert "outputFile holds only the start of the output" in done["stdout"], done["stdout"][-600:]
    assert "No space left on device" in done["stdout"] and "No space left on device" in done["note"]
    assert read["totalBytes"] > 0 and read["output"].endswith("the-end\noops\n"), read
    assert "No space left on device" in read["note"] and "4,000,014 bytes" in read["note"], read["note"]


# -- 4. no output file at all: the middle left out is marked --------------------------------------


async def test_without_an_output_file_command_output_marks_the_middle_it_could_not_keep(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Path(f"{home}-outputs").parent.mkdir(parents=True, exist_ok=True)
    Path(f"{home}-outputs").write_text("a file where the outputs folder should be")
    printed = "".join(f"{n}\n" for n in range(1, 200_001)).encode()
    async with named_here(home, COWORK, monkeypatch) as client:
        started = await call(client, "execute_command", {"command": "seq 1 200000; echo done >&2", "background": True})
        await wait_until_finished(client, started["jobId"])
        text, pages = await read_all(client, started["jobId"], 30_000)
    assert text.startswith("1\n2\n3\n") and text.endswith("199999\n200000\ndone\n")
    assert "bytes of stdout left out here" in text, "a marker where the middle was"
    assert f"{len(printed):,} bytes in all" in text
    assert pages[-1]["totalBytes"] == len(text.encode()), "what can be read, to its end"
    note = pages[0]["note"]
    assert "Not all of the output could be kept" in note and f"printed {len(printed) + 5:,} bytes in all" in note, note
    assert "`... > file 2>&1`" in note and "disk space" not in note


def test_what_memory_kept_marks_each_streams_middle_with_its_true_size() -> None:
    output = CommandOutput(OutputBudget(2_000))  # no folder: no file
    output.feed(0, "é".encode() * 20_000)
    output.feed(1, b"short\n")
    kept = output.kept_bytes().decode()
    marker = "[... 24,000 bytes of stdout left out here, not kept anywhere; stdout had 40,000 bytes in all ...]"
    assert f"é\n{marker}\né" in kept
    assert kept.startswith("é") and kept.endswith("é" * 4_000 + "short\n")


# -- 5. stdout and stderr as they came ----------------------------------------------------------------


async def test_a_job_that_ended_within_its_call_gives_stdout_and_stderr_in_the_order_they_came(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with named_here(home, COWORK, monkeypatch) as client:
        done = await call(client, "execute_command", {"command": "echo a; sleep .2; echo b >&2; sleep .2; echo c"})
        assert done["status"] == "finished"
        tail = await call(client, "command_output", {"jobId": done["jobId"]})
        paged = await call(client, "command_output", {"jobId": done["jobId"], "offset": 0})
    assert tail["output"] == paged["output"] == "a\nb\nc\n"


# -- 6. a job whose server ended: its output is read from its file -------------------------------------


async def test_command_wait_on_a_job_whose_server_ended_shows_what_its_output_file_holds(
    home: Path, paths: AppPaths
) -> None:
    marker = f"61{os.getpid() % 1000}.5"
    async with client_named(home, COWORK) as client:
        started = await call(
            client, "execute_command", {"command": f"echo printed-before; sleep {marker}", "background": True}
        )
        deadline = time.monotonic() + STOP_DEADLINE_S
        while time.monotonic() < deadline:
            said = await call(client, "command_output", {"jobId": started["jobId"]})
            if said["output"] == "printed-before\n" and live_processes(marker):
                break
            await anyio.sleep(0.05)
    job = started["jobId"]
    deadline = time.monotonic() + STOP_DEADLINE_S
    while time.monotonic() < deadline:
        with Journal.open(paths) as journal:
            row = journal.get_command(job)
        if not row.status.is_active and not live_processes(marker):
            break
        await anyio.sleep(0.1)
    assert row.status is Status.INTERRUPTED, row
    async with named_here(home, COWORK, pytest.MonkeyPatch()) as another:
        read = await call(another, "command_wait", {"jobId": job})
    assert read["stdout"] == "printed-before\n", read
    assert "The start and end of each stream are shown" not in read["note"], read["note"]
    assert "outputFile" in read["note"] and read["outputFile"], read


# -- 7. command_list lists every running job ---------------------------------------------------------


async def test_command_list_lists_every_running_job_however_many(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = f"71{os.getpid() % 1000}.5"
    async with named_here(home, COWORK, monkeypatch) as client:
        started = [
            (await call(client, "execute_command", {"command": f"sleep {marker}", "background": True}))["jobId"]
            for _ in range(23)
        ]
        listed = await call(client, "command_list", {})
        for job in started:
            await call(client, "command_stop", {"jobId": job})
    running = [entry["jobId"] for entry in listed["jobs"] if entry["status"] == "running"]
    assert sorted(running) == sorted(started), listed
    assert listed.get("note") is None


# -- 8. command_wait's timeout -------------------------------------------------------------------------


async def test_command_wait_takes_any_timeout_and_says_when_it_waited_less(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with named_here(home, COWORK, monkeypatch, SHORT_PATIENCE) as client:
        started = await call(client, "execute_command", {"command": "sleep 4", "background": True})
        job = started["jobId"]
        before = time.monotonic()
        at_once = await call(client, "command_wait", {"jobId": job, "timeout": 0})
        assert at_once["status"] == "running" and time.monotonic() - before < 1.0, at_once
        long = await call(client, "command_wait", {"jobId": job, "timeout": 3_600_000})
        assert long["status"] == "running", long
        assert "waits at most about 2 s per call" in long["note"] and "call command_wait again" in long["note"]
        refused = await call(client, "command_wait", {"jobId": job, "timeout": -5})
        await call(client, "command_stop", {"jobId": job})
    assert "background" not in refused["error"] and "0 or more" in refused["error"], refused
