"""A short command can name a long script: judging `bash s0.sh` with a 250 kB script took the
classifier 1.6-2.1 s (a red team, 2026-12-06), and a command of at most
CLASSIFY_ON_A_THREAD_CHARS characters was judged on the loop that serves every call. Now such a
judgement gives up at a deadline (classify's `deadline`) and is judged again on a worker thread."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from app.core.classifier import JudgedTooLong, Tier, classify, classify_typed
from app.core.classifier.scripts import INLINE_SCRIPT_CHARS
from tests.in_process_server import serving
from tests.stdio_client import run

pytestmark = pytest.mark.anyio


def long_script(folder: Path) -> Path:
    """A script far longer than INLINE_SCRIPT_CHARS that runs at once (its first line ends it)."""
    lines = ["exit 0"]
    lines += [f'echo "step {i}" | grep -v x | sort > /dev/null && cp o{i} p{i}' for i in range(600)]
    script = folder / "s0.sh"
    script.write_text("\n".join(lines) + "\n")
    assert script.stat().st_size > 2 * INLINE_SCRIPT_CHARS
    return script


def test_a_deadline_gives_up_on_a_long_script_and_leaves_the_verdict_to_a_judging_without_one(
    tmp_path: Path,
) -> None:
    long_script(tmp_path)
    with pytest.raises(JudgedTooLong):
        classify("bash s0.sh", cwd=str(tmp_path), deadline=time.monotonic() + 60)
    without = classify("bash s0.sh", cwd=str(tmp_path))
    assert without.tier is Tier.MODERATE and "runs a script (checked)" in " ".join(without.reasons)
    short = tmp_path / "short.sh"
    short.write_text("ls -la\n")
    within = classify("bash short.sh", cwd=str(tmp_path), deadline=time.monotonic() + 60)
    assert within == classify("bash short.sh", cwd=str(tmp_path)), "within its deadline: the same verdict"
    with pytest.raises(JudgedTooLong):  # the deadline itself, where no script is read
        classify("echo " + " | ".join(["cat"] * 200), deadline=time.monotonic() - 1)


async def test_a_short_command_naming_a_long_script_does_not_hold_up_another_call(home: Path, tmp_path: Path) -> None:
    """Two calls at once to a headless server in this process: `bash s0.sh` (a long script, judged in
    about half a second here) and `echo hi`. The loop that judges commands serves both: `echo hi`
    used to wait for the whole judgement."""
    long_script(tmp_path)
    began = time.monotonic()
    classify("bash s0.sh", cwd=str(tmp_path))
    judging_s = time.monotonic() - began
    async with serving(home) as client:
        await run(client, {"command": "true"})  # the classifier and the spare warm
        quick: dict[str, float] = {}

        async def echo() -> None:
            began = time.monotonic()  # before the sleep: a loop held by the judging holds the sleep too
            await anyio.sleep(0.05)  # once the long one is being judged
            result = await run(client, {"command": "echo hi"})
            quick["took"] = time.monotonic() - began - 0.05
            assert result["stdout"] == "hi\n", result

        async with anyio.create_task_group() as group:
            group.start_soon(run, client, {"command": "bash s0.sh", "cwd": str(tmp_path)})
            group.start_soon(echo)
    assert quick["took"] < judging_s / 2, f"echo hi took {quick['took']:.2f} s; judging the script {judging_s:.2f} s"


def test_keys_typed_into_a_shell_that_name_a_long_script_give_up_at_the_deadline_too(tmp_path: Path) -> None:
    long_script(tmp_path)
    with pytest.raises(JudgedTooLong):
        classify_typed("bash s0.sh\n", "bash", cwd=str(tmp_path), deadline=time.monotonic() + 60)
    typed = classify_typed("bash s0.sh\n", "bash", cwd=str(tmp_path))
    assert typed.tier is Tier.MODERATE and typed == classify("bash s0.sh\n", cwd=str(tmp_path))
