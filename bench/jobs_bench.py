"""What the job machinery (issue 22) costs a short call: `echo hi` run the way execute_command ran it
before (CommandService.execute, in the call's own task) and as a job (Jobs.start, the job's task in
the server's background group, the call waiting on its end), alternately, in one headless service.

Run (any OS with bash):
    python bench/jobs_bench.py [--runs 400]

The target: the job's median within 0.3 ms of the direct call's. Both spawn bash and write the
journal; only the machinery between them differs.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import anyio  # noqa: E402

from app.core import data_folder  # noqa: E402
from app.core.commands.request import ExecuteRequest  # noqa: E402
from app.core.commands.service import CommandService  # noqa: E402
from app.core.execution.bash_resolver import find_bash  # noqa: E402
from app.core.journal.store import Journal  # noqa: E402
from app.core.paths import HOME_ENV, AppPaths  # noqa: E402

TARGET_MS = 0.3


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def machinery(service: CommandService, runs: int) -> list[float]:
    """The job machinery alone, with nothing to run: a Job, its task in the background group, the
    call's wait on its end (the parts a job adds to a call; the command's own cost is the same)."""
    from app.core.commands.jobs import Job

    async def nothing(job: Job) -> None:
        job.started.set()
        job.done.set()

    took = []
    for _ in range(runs):
        started = time.perf_counter()
        job = Job(0, "execute_command", "echo hi", "/")
        service.spawn(nothing, job)
        await service.jobs.wait(job, 30.0)
        took.append((time.perf_counter() - started) * 1000)
    return took


async def measure(runs: int) -> tuple[list[float], list[float], list[float]]:
    paths = data_folder.ensure(AppPaths.from_environment())
    journal = Journal(paths)
    bash = find_bash()
    service = CommandService(
        journal, paths, server_id=None, bash=lambda: bash, environment=lambda extra: {**os.environ, **extra}
    )
    request = ExecuteRequest(command="echo hi")
    direct: list[float] = []
    as_job: list[float] = []
    async with anyio.create_task_group() as group:
        group.start_soon(service.run_background)
        while not service.serving:
            await anyio.sleep(0.01)
        for index in range(runs + 20):  # the first 20 of each warm up; the order alternates
            took: dict[str, float] = {}
            for way in ("direct", "job") if index % 2 else ("job", "direct"):
                started = time.perf_counter()
                if way == "direct":
                    result = await service.execute(request)
                else:
                    job = await service.jobs.start(request)
                    await service.jobs.wait(job, 30.0)
                    assert job.result is not None
                    result = job.result
                took[way] = (time.perf_counter() - started) * 1000
                assert result.output.finish().texts[0] == "hi\n"
            if index >= 20:
                direct.append(took["direct"])
                as_job.append(took["job"])
        alone = await machinery(service, runs)
        group.cancel_scope.cancel()
    journal.close()
    return direct, as_job, alone


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ[HOME_ENV] = home
        direct, as_job, alone = anyio.run(measure, args.runs)
    gap = statistics.median(as_job) - statistics.median(direct)
    paired = statistics.median(j - d for j, d in zip(as_job, direct, strict=True))
    print(f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, n={args.runs} each")
    print("| path | median / p95 |")
    print("| --- | --- |")
    print(f"| `echo hi`, direct (before) | {statistics.median(direct):.2f} / {percentile(direct, 0.95):.2f} ms |")
    print(f"| `echo hi`, as a job (after) | {statistics.median(as_job):.2f} / {percentile(as_job, 0.95):.2f} ms |")
    print(f"| difference of the medians | {gap:+.3f} ms |")
    print(f"| median of the paired differences | {paired:+.3f} ms |")
    cost = statistics.median(alone)
    verdict = "met" if cost <= TARGET_MS else "MISSED"
    print(
        f"| the job machinery alone (no command) | {cost:.3f} / {percentile(alone, 0.95):.3f} ms "
        f"(target within {TARGET_MS} ms: {verdict}) |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
