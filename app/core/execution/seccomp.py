"""The read-only tool's seccomp filter: no Unix or vsock socket can be made inside it, nor io_uring, nor
a kernel key touched, nor a terminal typed into, nor a file's mode, owner, attributes or times set
(bwrap's `--seccomp`).

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
Landlock judges only writes and makes: on a file system the host mounted while a command slept (a red
team, 2026-12-05), `chmod`, `chown`, `setfattr`, `touch -d` and `chattr` all changed the host's
file. A file's mode, owner and extended attributes cannot be changed here at all (EPERM, even in the
private /tmp: `chmod +x` there fails too), nor its times set to a given value (`touch -d`). `touch
FILE` passes no time, which means now, and keeps working: it makes files in the private /tmp (on such
a late mount it still sets a file's time to now: a pointer is all the filter sees, not the path).
Nor are its attributes set by ioctl or file_setattr (chattr's flags, its version and project), nor
fs-verity turned on, nor an encryption key of the file system added or removed (a key removed locks
the user's encrypted folders, on any file system the command can open a file of).

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
# first argument's low 32 bits at 16, its high ones at 20, the second's at 24: argument_at)
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
# (asm-generic/ioctls.h, linux/fs.h, fscrypt.h, fsverity.h: the same on both machines, checked with
# the headers' own macros).
IOCTL_CALLS = {"x86_64": (16, 514 | X32), "aarch64": (29,)}
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
FS_IOC_SETFLAGS = 0x40086602  # chattr's flags; its 32-bit spelling (FS_IOC32_SETFLAGS) below
FS_IOC_FSSETXATTR = 0x401C5820  # the same flags, a project id
FS_IOC_SETVERSION = 0x40087602  # chattr -v
FILE_IOCTLS = (
    FS_IOC_SETFLAGS,
    0x40046602,  # FS_IOC32_SETFLAGS
    FS_IOC_FSSETXATTR,
    FS_IOC_SETVERSION,
    0x40047602,  # FS_IOC32_SETVERSION
    0x40806685,  # FS_IOC_ENABLE_VERITY: the file can never be written again
    0x800C6613,  # FS_IOC_SET_ENCRYPTION_POLICY
    0xC0506617,  # FS_IOC_ADD_ENCRYPTION_KEY
    0xC0406618,  # FS_IOC_REMOVE_ENCRYPTION_KEY
    0xC0406619,  # FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS
)
REFUSED_IOCTLS = (TIOCSTI, TIOCLINUX, *FILE_IOCTLS)
# The calls that change a file's mode, owner or extended attributes, or its attributes by path
# (asm/unistd_64.h, asm-generic/unistd.h; the newer ones share one number on every machine:
# fchmodat2 452 since Linux 6.6, setxattrat 463 and removexattrat 466 since 6.13, file_setattr 469
# since 6.17). An older kernel answers ENOSYS to those anyway.
ATTRIBUTE_CALLS = {
    # chmod fchmod fchmodat fchmodat2, chown fchown lchown fchownat, setxattr lsetxattr fsetxattr
    # removexattr lremovexattr fremovexattr setxattrat removexattrat, file_setattr
    "x86_64": (90, 91, 268, 452, 92, 93, 94, 260, 188, 189, 190, 197, 198, 199, 463, 466, 469),
    # aarch64 has no chmod, chown nor lchown (the *at calls do their work)
    "aarch64": (52, 53, 452, 55, 54, 5, 6, 7, 14, 15, 16, 463, 466, 469),
}
# The calls that set a file's times, and the argument that holds them: NULL means now, as `touch FILE`
# passes it; anything else is refused (`touch -d`, `cp -p`, `tar x`'s times). utime, utimes,
# futimesat, utimensat.
TIME_CALLS = {"x86_64": ((132, 1), (235, 1), (261, 2), (280, 2)), "aarch64": ((88, 2),)}

Instruction = tuple[int, str | int, str | int, int]  # jumps named by the label they go to, or 0


def program(machine: str) -> bytes | None:
    """The filter for `machine`: socket() of a refused family fails with EACCES, io_uring and the
    keyring calls with ENOSYS; TIOCSTI, TIOCLINUX and the file attribute ioctls, the calls that change
    a file's mode, owner or extended attributes, and those that set its times to a given value with
    EPERM; everything else is allowed. None for a machine whose table is not known here (the tool
    then runs without it)."""
    if machine not in MACHINES:
        return None
    arch, socket_call, keyrings = MACHINES[machine]
    numbers = [*IO_URING, *keyrings]
    sockets = [socket_call]
    attributes = list(ATTRIBUTE_CALLS[machine])
    times = list(TIME_CALLS[machine])
    if machine == "x86_64":
        numbers += [n | X32 for n in numbers]
        sockets.append(socket_call | X32)
        attributes += [n | X32 for n in attributes]
        times += [(n | X32, at) for n, at in times]
    code: list[tuple[str | None, Instruction]] = [
        (None, (LOAD_WORD, 0, 0, ARCH_AT)),
        (None, (JUMP_IF_EQUAL, 0, "eacces", arch)),
        (None, (LOAD_WORD, 0, 0, NR_AT)),
        *((None, (JUMP_IF_EQUAL, "enosys", 0, number)) for number in numbers),
        *((None, (JUMP_IF_EQUAL, "family", 0, number)) for number in sockets),
        *((None, (JUMP_IF_EQUAL, "request", 0, number)) for number in IOCTL_CALLS[machine]),
        *((None, (JUMP_IF_EQUAL, "eperm", 0, number)) for number in attributes),
        *((None, (JUMP_IF_EQUAL, f"times{at}", 0, number)) for number, at in times),
        (None, (RETURN, 0, 0, ALLOW)),
        ("family", (LOAD_WORD, 0, 0, FIRST_ARGUMENT_AT)),
        *((None, (JUMP_IF_EQUAL, "eacces", 0, family)) for family in REFUSED_FAMILIES),
        (None, (RETURN, 0, 0, ALLOW)),
        ("request", (LOAD_WORD, 0, 0, SECOND_ARGUMENT_AT)),  # its low 32 bits (little-endian)
        *((None, (JUMP_IF_EQUAL, "eperm", 0, request)) for request in REFUSED_IOCTLS),
        (None, (RETURN, 0, 0, ALLOW)),
    ]
    for at in sorted({at for _, at in times}):  # the times pointer: NULL (both halves 0) means now
        code += [
            (f"times{at}", (LOAD_WORD, 0, 0, argument_at(at))),
            (None, (JUMP_IF_EQUAL, 0, "eperm", 0)),
            (None, (LOAD_WORD, 0, 0, argument_at(at) + 4)),
            (None, (JUMP_IF_EQUAL, 0, "eperm", 0)),
            (None, (RETURN, 0, 0, ALLOW)),
        ]
    code += [
        ("eacces", (RETURN, 0, 0, ERRNO | EACCES)),
        ("enosys", (RETURN, 0, 0, ERRNO | ENOSYS)),
        ("eperm", (RETURN, 0, 0, ERRNO | EPERM)),
    ]
    return _assemble(code)


def argument_at(index: int) -> int:
    """Where the low 32 bits of argument `index` (from 0) are in struct seccomp_data; the high ones follow."""
    return FIRST_ARGUMENT_AT + 8 * index


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
