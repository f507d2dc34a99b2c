"""The read-only tool's seccomp filter: no Unix or vsock socket can be made inside it, nor io_uring, nor
a kernel key touched, nor a terminal typed into (bwrap's `--seccomp`).

Why: the read-only tool promises that a command changes nothing, and a read-only mount does not stop
a connect() to a socket file: a daemon listening in the home folder (Docker Desktop's, gpg-agent's
where there is no runtime folder) would then change files for it (red team, 2026-12-04). /run and the
runtime folder are hidden, and the network namespace keeps TCP and abstract sockets out; this closes
the rest. `socketpair` stays: it reaches nobody outside. io_uring is refused whole: its own socket
and connect operations pass by the socket call (red team, 2026-12-04). A vsock socket passes by the
network namespace to the hypervisor's host (a VM, WSL2). The kernel's keyrings are not namespaced:
from inside, a review (2026-12-05) read a secret the host had put in its session keyring,
invalidated it and planted a key the host saw after the command (add_key, request_key, keyctl).
The TIOCSTI ioctl puts keys into a terminal's input as if typed, and TIOCLINUX pastes into a virtual
console: a command that reached the user's terminal would type commands into the user's shell. Callers
start the container without a terminal and its check leaves one it still has (read_only.py); this
holds whatever terminal a descriptor names. The ioctl's request is an unsigned int: only its low 32
bits are compared, as the kernel reads them (Flatpak's CVE-2019-10063 compared all 64).

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
EPERM = 1  # what the kernel says itself to a TIOCSTI it refuses
EACCES = 13
ENOSYS = 38  # "not here", which runtimes that can do without io_uring or keyrings recognise
AF_UNIX = 1
AF_VSOCK = 40
REFUSED_FAMILIES = (AF_UNIX, AF_VSOCK)
# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian: the
# first argument's low 32 bits at 16, the second's at 24)
NR_AT, ARCH_AT, FIRST_ARGUMENT_AT, SECOND_ARGUMENT_AT = 0, 4, 16, 24
# The machine (os.uname) -> its audit architecture, the number of socket(2) on it, and its keyring
# calls (add_key, request_key, keyctl).
MACHINES = {
    "x86_64": (0xC000003E, 41, (248, 249, 250)),
    "aarch64": (0xC00000B7, 198, (217, 218, 219)),
}
IO_URING = (425, 426, 427)  # io_uring_setup, _enter, _register: the same numbers on both machines
X32 = 0x40000000  # the x32 ABI's calls: x86-64's numbers with this bit
# ioctl(2) on each machine (x32 has its own, 514; its 16 is not a call), and the requests refused
# (asm-generic/ioctls.h: the same on both machines).
IOCTL_CALLS = {"x86_64": (16, 514 | X32), "aarch64": (29,)}
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
REFUSED_IOCTLS = (TIOCSTI, TIOCLINUX)

Instruction = tuple[int, str | int, str | int, int]  # jumps named by the label they go to, or 0


def program(machine: str) -> bytes | None:
    """The filter for `machine`: socket() of a refused family fails with EACCES, io_uring and the
    keyring calls with ENOSYS, TIOCSTI and TIOCLINUX with EPERM, everything else is allowed; None for
    a machine whose table is not known here (the tool then runs without it)."""
    if machine not in MACHINES:
        return None
    arch, socket_call, keyrings = MACHINES[machine]
    numbers = [*IO_URING, *keyrings]
    sockets = [socket_call]
    if machine == "x86_64":
        numbers += [n | X32 for n in numbers]
        sockets.append(socket_call | X32)
    code: list[tuple[str | None, Instruction]] = [
        (None, (LOAD_WORD, 0, 0, ARCH_AT)),
        (None, (JUMP_IF_EQUAL, 0, "eacces", arch)),
        (None, (LOAD_WORD, 0, 0, NR_AT)),
        *((None, (JUMP_IF_EQUAL, "enosys", 0, number)) for number in numbers),
        *((None, (JUMP_IF_EQUAL, "family", 0, number)) for number in sockets),
        *((None, (JUMP_IF_EQUAL, "request", 0, number)) for number in IOCTL_CALLS[machine]),
        (None, (RETURN, 0, 0, ALLOW)),
        ("family", (LOAD_WORD, 0, 0, FIRST_ARGUMENT_AT)),
        *((None, (JUMP_IF_EQUAL, "eacces", 0, family)) for family in REFUSED_FAMILIES),
        (None, (RETURN, 0, 0, ALLOW)),
        ("request", (LOAD_WORD, 0, 0, SECOND_ARGUMENT_AT)),  # its low 32 bits (little-endian)
        *((None, (JUMP_IF_EQUAL, "eperm", 0, request)) for request in REFUSED_IOCTLS),
        (None, (RETURN, 0, 0, ALLOW)),
        ("eacces", (RETURN, 0, 0, ERRNO | EACCES)),
        ("enosys", (RETURN, 0, 0, ERRNO | ENOSYS)),
        ("eperm", (RETURN, 0, 0, ERRNO | EPERM)),
    ]
    return _assemble(code)


def _assemble(code: list[tuple[str | None, Instruction]]) -> bytes:
    """BPF bytes of labelled instructions: a jump counts the instructions it skips."""
    at = {label: index for index, (label, _) in enumerate(code) if label}
    out = []
    for index, (_, (op, true, false, value)) in enumerate(code):
        skip = [at[target] - index - 1 if isinstance(target, str) else target for target in (true, false)]
        out.append(struct.pack("<HBBI", op, skip[0], skip[1], value))
    return b"".join(out)


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
