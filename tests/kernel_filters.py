"""What the read-only tool's kernel filters do, run here: the seccomp program on a call's data, as the
kernel runs it, and a folder on a shared mount under which the host mounts a file system while a
command in the container runs (what bwrap did not see as it started; tests/test_read_only*.py)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from app.core.execution import seccomp


def verdict(code: bytes, arch: int, number: int, *args: int) -> int:
    """What the kernel answers for a call: the filter run on its struct seccomp_data (six arguments)."""
    data = struct.pack("<iIQ6Q", number, arch, 0, *args, *[0] * (6 - len(args)))
    at = loaded = 0
    while True:
        op, true, false, value = struct.unpack("<HBBI", code[at * 8 : at * 8 + 8])
        if op == seccomp.RETURN:
            return value
        if op == seccomp.LOAD_WORD:
            loaded = struct.unpack("<I", data[value : value + 4])[0]
            at += 1
        else:
            assert op == seccomp.JUMP_IF_EQUAL
            at += 1 + (true if loaded == value else false)


@dataclass
class SharedFolder:
    """`folder`, bound on itself and made shared (as systemd's `/` is), with an empty `m` in it."""

    folder: Path
    mounted: list[str] = field(default_factory=list)

    def mount_later(self, *args: str) -> Path:
        """Mount a file system on `m` (`args`: mount's, before the target), as the host would."""
        target = self.folder / "m"
        subprocess.run(["mount", *args, str(target)], check=True)
        self.mounted.insert(0, str(target))
        return target


@contextmanager
def late_mount_folder() -> Iterator[SharedFolder]:
    """A SharedFolder under /var/tmp (root only), unmounted and removed afterwards."""
    shared = SharedFolder(Path(tempfile.mkdtemp(dir="/var/tmp")))
    (shared.folder / "m").mkdir()
    try:
        subprocess.run(["mount", "--bind", str(shared.folder), str(shared.folder)], check=True)
        shared.mounted.append(str(shared.folder))
        subprocess.run(["mount", "--make-shared", str(shared.folder)], check=True)
        yield shared
    finally:
        for point in shared.mounted:
            subprocess.run(["umount", point], check=False)
        shutil.rmtree(shared.folder)
