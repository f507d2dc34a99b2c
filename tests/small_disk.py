"""A disk that fills up, for tests of a full disk (tests/conftest.py's `small_disk`, and an outputs
folder on one)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_tmpfs(mount_point: Path, size: str = "2m") -> Iterator[Path]:
    """A tmpfs of `size` on `mount_point` (made here), unmounted afterwards (Linux, as root: CI is;
    else the test is skipped): a disk that fills up."""
    mount_point.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)
