"""The read-only tool's seccomp filter: no Unix socket can be made inside it (bwrap's `--seccomp`).

Why: the read-only tool promises that a command changes nothing, and a read-only mount does not stop
a connect() to a socket file: a daemon listening in the home folder (Docker Desktop's, gpg-agent's
where there is no runtime folder) would then change files for it (red team, 2026-12-04). /run and the
runtime folder are hidden, and the network namespace keeps TCP and abstract sockets out; this closes
the rest. `socketpair` stays: it reaches nobody outside. io_uring is refused whole: its own socket
and connect operations pass by the socket call (red team, 2026-12-04).

The program is a classic BPF one, as `seccomp_export_bpf` writes it (struct sock_filter: a 16-bit
code, two 8-bit jumps, a 32-bit value), built here for the machine's own system call table. Another
architecture's calls (a 32-bit program on a 64-bit kernel) fail: their socket call cannot be read.
"""

from __future__ import annotations

import os
import struct

# BPF instructions (linux/filter.h, linux/bpf_common.h) and seccomp's (linux/seccomp.h, linux/audit.h).
LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
JUMP_IF_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
RETURN = 0x06  # BPF_RET | BPF_K
ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
ERRNO = 0x00050000  # SECCOMP_RET_ERRNO, with the errno in its low 16 bits
EACCES = 13
ENOSYS = 38  # io_uring's answer: "not here", which runtimes that can do without it recognise
AF_UNIX = 1
# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian: the
# first argument's low 32 bits at 16)
NR_AT, ARCH_AT, FIRST_ARGUMENT_AT = 0, 4, 16
# The machine (os.uname) -> its audit architecture and the numbers of socket(2) on it.
MACHINES = {
    "x86_64": (0xC000003E, (41, 0x40000000 | 41)),  # the x32 ABI's number too
    "aarch64": (0xC00000B7, (198,)),
}
IO_URING = (425, 426, 427)  # io_uring_setup, _enter, _register: the same numbers on both machines
X32 = 0x40000000  # the x32 ABI's calls: x86-64's numbers with this bit


def program(machine: str) -> bytes | None:
    """The filter for `machine`: socket(AF_UNIX, ...) fails with EACCES, everything else is allowed;
    None for a machine whose table is not known here (the tool then runs without it)."""
    if machine not in MACHINES:
        return None
    arch, numbers = MACHINES[machine]
    # Laid out as: check the architecture, load the call's number, one test per io_uring call (to
    # deny), one per socket number (to the argument's test), load the first argument, test AF_UNIX,
    # allow, deny. Jumps count the instructions skipped.
    rings = [*IO_URING, *((n | X32 for n in IO_URING) if machine == "x86_64" else ())]
    refused, count = len(rings), len(numbers)
    check_at = 3 + refused + count  # where the first argument is loaded
    allow_at, deny_at, no_ring_at = check_at + 2, check_at + 3, check_at + 4
    code = [(LOAD_WORD, 0, 0, ARCH_AT), (JUMP_IF_EQUAL, 0, deny_at - 2, arch), (LOAD_WORD, 0, 0, NR_AT)]
    for index, number in enumerate(rings):
        code.append((JUMP_IF_EQUAL, no_ring_at - (3 + index) - 1, 0, number))
    for index, number in enumerate(numbers):
        here = 3 + refused + index
        last = index == count - 1
        code.append((JUMP_IF_EQUAL, check_at - here - 1, allow_at - here - 1 if last else 0, number))
    code += [
        (LOAD_WORD, 0, 0, FIRST_ARGUMENT_AT),
        (JUMP_IF_EQUAL, deny_at - check_at - 2, 0, AF_UNIX),
        (RETURN, 0, 0, ALLOW),
        (RETURN, 0, 0, ERRNO | EACCES),
        (RETURN, 0, 0, ERRNO | ENOSYS),
    ]
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in code)


def filter_fd(machine: str | None = None) -> int | None:
    """A descriptor bwrap reads the filter from (`--seccomp FD`: it reads to the end, so one per
    container), or None where there is no filter for this machine. The caller closes it."""
    code = program(machine or os.uname().machine)
    if code is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, code)  # 8 bytes an instruction: far less than a pipe holds
    finally:
        os.close(write)
    return read
