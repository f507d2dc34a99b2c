"""The check the hand-off tests share: a command held as starting a program outside Cowork
Terminal's watch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app.core.classifier import Classification, Danger, Tier, classify


def held_outside(command: str, cwd: str | None, *, deciding: bool = False) -> Classification:
    """Held (destructive), with a finding that it starts a program outside the watch; `deciding`:
    that is the command's danger, what the person reads first. The result, for what a test adds."""
    result = classify(command, cwd=cwd)
    assert result.tier is Tier.DESTRUCTIVE, (command, result)
    if deciding:
        assert result.danger is Danger.OUTSIDE_WATCH, (command, result)
    else:
        assert any(f.danger is Danger.OUTSIDE_WATCH for f in result.findings), (command, result)
    return result


def tier_apart(command: str, cwd: Path) -> str:
    """The tier's name, from a classifier in a process of its own under a time limit: for a
    command whose files could make it wait forever (a FIFO where one is read)."""
    code = f"from app.core.classifier import classify; print(classify({command!r}, cwd={str(cwd)!r}).tier.name)"
    done = subprocess.run(  # noqa: S603 (this interpreter, our own code)
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
