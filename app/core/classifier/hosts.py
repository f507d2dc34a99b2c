"""Which host is this machine: the one test every rule uses for ssh (and its kin) to this same
machine, whose server starts programs outside the command's container (issue 21).

Below the rule modules: it reads words and a few system files, and imports no rule family.
This machine is: a loopback or unspecified address in any spelling, a name mapped to one (the
usual names, and /etc/hosts'), this machine's own name, and the addresses of its own interfaces
(Linux: /proc/net/fib_trie's and /proc/net/if_inet6's), and an alias ssh's configuration gives one
of these (`Host build` / `HostName localhost`). A host an expansion decides (`"$h"`, `$(hostname)`)
counts as this machine: which one it is is known only when the command runs.
"""

from __future__ import annotations

import fnmatch
import functools
import glob
import ipaddress
import itertools
import os
import re
import shlex
import socket
import sys
import time
from collections.abc import Callable, Mapping

from .regular_files import read_regular
from .words import _Word

# The names of a loopback address most systems' /etc/hosts have (Debian's ip6-*, Red Hat's *6 and *4)
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", "localhost6",
                         "localhost6.localdomain6", "localhost4", "localhost4.localdomain4"})  # fmt: skip
MAX_SYSTEM_FILE = 1 << 20  # of /etc/hosts and /proc/net's tables, only this much is read
ADDRESSES_FOR = 60.0  # seconds this machine's interface addresses are kept before they are read again
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _hosts_path() -> str:
    if os.name == "nt":
        return os.path.join(os.environ.get("SYSTEMROOT", r"C:\Windows"), "System32", "drivers", "etc", "hosts")
    return "/etc/hosts"


def read_small_file(path: str, limit: int = MAX_SYSTEM_FILE) -> str | None:
    """A regular file's first `limit` bytes, cut at its last whole line; None when it is not one. A
    FIFO or a device put in its place must not block or stall the classifier: opened non-blocking,
    and read only when it is a regular file."""
    data = read_regular(path, limit)
    if data is None:
        return None
    if len(data) >= limit:  # the rest is not read: a line cut in two is left out
        data = data[: data.rfind(b"\n") + 1]
    return data.decode("utf-8", errors="replace")


def address(host: str) -> _Address | None:
    """An IP address in any spelling the system's resolver takes: 127.1, 0x7f000001, 2130706433,
    017700000001, `fe80::1%eth0`; an IPv4-mapped IPv6 address as its IPv4 one."""
    try:
        found: _Address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        try:  # inet_aton reads the short, hexadecimal and octal forms (127.1, 0x7f.1, 017700000001)
            found = ipaddress.ip_address(socket.inet_aton(host))
        except (OSError, ValueError):
            return None
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found


def loopback(host: str) -> bool:
    """A loopback or unspecified address (0.0.0.0 and `::` reach this machine too), in any spelling
    (red team, Windows: 127.1, 0x7f000001, 0, ::ffff:127.0.0.1 each passed as another machine)."""
    found = address(host)
    return found is not None and (found.is_loopback or found.is_unspecified)


def loopback_names(path: str) -> frozenset[str]:
    """The names a hosts file maps to a loopback or unspecified address (`127.0.1.1 myhost`)."""
    names: set[str] = set()
    for line in (read_small_file(path) or "").splitlines():
        fields = line.partition("#")[0].split()
        if len(fields) > 1 and loopback(fields[0]):
            names.update(name.casefold().rstrip(".") for name in fields[1:])
    return frozenset(names)


def interface_addresses(fib_trie: str, if_inet6: str) -> frozenset[_Address]:
    """Linux's addresses of this machine's interfaces: the `/32 host LOCAL` entries of fib_trie (the
    docker0 bridge's 172.17.0.1 too) and each address of if_inet6 (32 hex digits a line)."""
    found: set[_Address] = set()
    lines = (read_small_file(fib_trie) or "").splitlines()
    for before, line in zip(lines, lines[1:], strict=False):
        if line.split() == ["/32", "host", "LOCAL"] and before.strip().startswith("|--"):
            one = address(before.strip()[3:].strip())
            if one is not None:
                found.add(one)
    for line in (read_small_file(if_inet6) or "").splitlines():
        digits = (line.split() or [""])[0]
        if re.fullmatch(r"[0-9a-fA-F]{32}", digits):
            found.add(ipaddress.IPv6Address(int(digits, 16)))
    return frozenset(found)


@functools.cache
def _system_loopback_names() -> frozenset[str]:
    return loopback_names(_hosts_path())


_cached_addresses: tuple[float, frozenset[_Address]] = (float("-inf"), frozenset())


def _own_addresses() -> frozenset[_Address]:
    """This machine's interface addresses, read again after ADDRESSES_FOR seconds (Linux only)."""
    global _cached_addresses
    if not sys.platform.startswith("linux"):
        return frozenset()
    read_at, found = _cached_addresses
    if time.monotonic() - read_at > ADDRESSES_FOR:
        found = interface_addresses("/proc/net/fib_trie", "/proc/net/if_inet6")
        _cached_addresses = (time.monotonic(), found)
    return found


def is_this_machine(host: str) -> bool:
    """Whether a host (`[user@]host`, `[::1]`, `localhost.`) is this machine, also where ssh's
    configuration makes it an alias of this machine (`Host build` / `HostName localhost`)."""
    host = plain_host(host).casefold().removeprefix("[").removesuffix("]").rstrip(".")
    if not host:
        return False
    if _named_here(host):
        return True
    return "*" not in host and any(aliased_here(host, text, path) for path, text in _ssh_configs())


def _named_here(host: str) -> bool:
    """`is_this_machine` of a host by its own name or address (no ssh alias)."""
    host = host.casefold().removeprefix("[").removesuffix("]").rstrip(".")
    own = socket.gethostname().casefold()
    if host in LOCAL_NAMES or host in (own, own.split(".")[0], f"{own}.local") or loopback(host):
        return True
    found = address(host)
    if found is not None:
        return found in _own_addresses()
    return host in _system_loopback_names()


def this_machine(host: str | None) -> bool:
    """Whether a host found in a word is this machine, or may be: `*` where an expansion decides it
    (as `ssh "$h"`); None (no host) is not."""
    return host is not None and ("*" in host or is_this_machine(host))


def local_host(word: _Word) -> bool:
    """Whether a word known here (`[user@]host`) names this machine; an expansion is not known here."""
    return word.value is not None and is_this_machine(word.value)


# ---- hosts in words: `[user@]host:path`, `[::1]:path`, and URLs

_URL = re.compile(r"^[A-Za-z][\w+.-]*://")
_URL_HOST = re.compile(r"^([A-Za-z][\w+.-]*)://([^/?#]*)")
# An ssh-like URL anywhere in a text (`lftp -c 'open sftp://host'`): its scheme and its authority
_URL_IN_TEXT = re.compile(r"(?:^|(?<=[\s'\"=;,(]))([A-Za-z][\w+.-]*)://([^/?#\s'\";]*)")
_BRACKETED = re.compile(r"^(?:[^/@]*@)?\[([^\]/]*)\]:")  # `[::1]:path`, `ana@[::1]:path`
# Schemes reached through ssh: ssh, scp, sftp, and each with a prefix or suffix (git+ssh, ssh+git,
# svn+ssh, bzr+ssh, duplicity's pexpect+sftp and paramiko+scp); fish runs a shell through ssh (lftp).
_THROUGH_SSH = frozenset({"ssh", "scp", "sftp", "fish"})


def authority_host(authority: str) -> str | None:
    """The host of a URL's authority (`user:pw@host:port`, `[::1]:22`); None for a `[` not closed."""
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        end = hostport.find("]")
        return hostport[1:end] if end > 0 else None
    return hostport.partition(":")[0]


def url_host(text: str) -> str | None:
    """The host of a URL of any scheme (`qemu+ssh://host/system`, `https://[::1]:6443`); None when
    `text` is no URL. `qemu:///system`: "" (this machine, by default)."""
    match = _URL_HOST.match(text)
    return authority_host(match[2]) if match is not None else None


def server_host(text: str) -> str | None:
    """The host of a server given as a URL or as `host[:port][/path]` (kubectl's --server)."""
    if _URL.match(text):
        return url_host(text)
    return authority_host(re.split(r"[/?#]", text, maxsplit=1)[0])


def _through_ssh(scheme: str, *, daemon: bool = False) -> bool:
    parts = set(scheme.casefold().split("+"))
    return bool(parts & _THROUGH_SSH) or (daemon and "rsync" in parts)


def remote_host(word: _Word, *, daemon: bool = False, urls_only: bool = False) -> str | None:
    """The host of an ssh remote (`[user@]host:path`, `[::1]:path`, `ssh://[user@]host[:port]/path`,
    `git+ssh://`, `scp://`, `sftp://`, `svn+ssh://`...), `*` where an expansion decides it; None for a
    local path (`/` before the first `:`, as scp, rsync and git read it) or another kind of URL.
    `daemon`: rsync's `host::module` and `rsync://host/` too, which rsync -e reaches through ssh
    (without it, a daemon already running is asked). `urls_only`: for programs that read
    `host:path` as no host (curl, hg, svn)."""
    text = word.value if word.value is not None else word.pattern
    url = _URL_HOST.match(text)
    if url is not None:
        return authority_host(url[2]) if _through_ssh(url[1], daemon=daemon) else None
    if urls_only:
        return None
    bracketed = _BRACKETED.match(text)
    if bracketed is not None:
        return bracketed[1]
    before, colon, after = text.partition(":")
    if not colon or "/" in before or (after.startswith(":") and not daemon):
        return None
    return before.rsplit("@", 1)[-1] or None


def remote_here(words: list[_Word], *, daemon: bool = False, urls_only: bool = False) -> _Word | None:
    """The first of `words` that is an ssh remote on this machine, or may be (see `remote_host`)."""
    return next((w for w in words if this_machine(remote_host(w, daemon=daemon, urls_only=urls_only))), None)


def ssh_urls(text: str) -> list[str]:
    """The hosts of the URLs reached through ssh anywhere in a text (`open sftp://host; get x`)."""
    return [h for m in _URL_IN_TEXT.finditer(text) if _through_ssh(m[1]) and (h := authority_host(m[2]))]


def names_this_machine(text: str) -> bool:
    """Whether a host as given to a client (`[user@]host`, `host:port`, `sftp://host/path`) is this
    machine, or an expansion decides it."""
    return this_machine(text.rsplit("@", 1)[-1]) or this_machine(remote_host(_Word(text, text, text)))


def word_names_this_machine(word: _Word) -> bool:
    """`names_this_machine` of a word (its pattern, `*` where an expansion decides, when not known)."""
    return names_this_machine(word.value if word.value is not None else word.pattern)


# ---- ssh's configuration: a `Host` alias whose `HostName` is this machine
#
# `ssh build` reaches this machine when ~/.ssh/config says `Host build` / `HostName localhost` (a
# review of issue 21's hand-offs, 2026-12-05): every ssh-based client (scp, rsync, git, sshfs...)
# takes the alias too. Read as ssh reads it: the first `HostName` of a block that applies wins;
# a `Match` block may apply (its conditions are not evaluated here); `Include` is followed.

SSH_INCLUDE_DEPTH = 16  # ssh's own limit of nested Include (readconf.c)
SSH_FILES_READ = 256  # files one lookup reads at most: past them, the host may be this machine
SSH_FILE_BYTES = 256 * 1024
# A line's keyword as ssh splits it (quotes anywhere in it: `"HostName"`, `Host"Name"`), then `=` or spaces
_SSH_KEYWORD = re.compile(r'[ \t\r]*((?:"[^"\n]*"|[^\s"=])+)[ \t\r]*=?[ \t\r]*')
# The keywords that choose the machine reached: all others are skipped without splitting their values
_SSH_CHOOSES = frozenset({"host", "match", "include", "hostname", "proxycommand"})
_BLOCKS = frozenset({"host", "match"})
# The words of a command (a ProxyCommand) that may name a host: `nc localhost 22`, `TCP:[::1]:22`,
# `/dev/tcp/127.0.0.1/22`; a number alone is taken for a port or a count
# A proxy's address in a command: nc's -x, ncat's --proxy, connect's -S and -H, socat's PROXY:HOST
_PROXY_VALUES = re.compile(r"(?:(?<=\s)-[xSH][ \t]*|--proxy(?:=|[ \t]+))\S+|(?i:\b(?:socks4a?|proxy):)[^:\s]+")
_HOST_PIECES = re.compile(r"\[([0-9A-Fa-f:.%\w]+)\]|([^\s:/,@=<>'\"()\[\];|&]+)")


def ssh_line(line: str) -> tuple[str, str] | None:
    """A line of ssh's configuration as ssh reads it: its keyword (lower case) and the text after
    it; None for a blank line or a comment. ssh ends a line at a NUL too."""
    line = line.split("\0", 1)[0]
    if not line.strip(" \t\r") or line.lstrip(" \t\r").startswith("#"):
        return None
    match = _SSH_KEYWORD.match(line)
    return (match[1].replace('"', "").casefold(), line[match.end() :]) if match else None


def ssh_values(text: str) -> list[str]:
    """The values after a keyword, split as ssh does (quotes; a `#` word starts a comment). Raises
    ValueError for an unclosed quote (ssh refuses the file)."""
    return shlex.split(text, comments=True)


def command_hosts(text: str) -> list[str]:
    """The words of a command that may name a host (ProxyCommand's: `nc 127.0.0.1 22`, `socat -
    TCP:localhost:22`, `bash -c 'exec 3<>/dev/tcp/::1/22'`); numbers alone are left out, and so is
    a proxy the connection goes through (`nc -X 5 -x localhost:1080 %h %p`, socat's `PROXY:host:`,
    ncat's `--proxy`, connect's `-S`/`-H`: a SOCKS or HTTP proxy on this machine, common, relays to
    the host; sshd does not speak those)."""
    text = _PROXY_VALUES.sub(" ", text)
    pieces = [m[1] or m[2] for m in _HOST_PIECES.finditer(text)]
    return [piece for piece in pieces if piece and not piece.isdigit() and not piece.startswith("-")]


def ssh_config_files(platform: str, environ: Mapping[str, str], homes: list[str]) -> list[str]:
    """The files ssh reads when no -F is given: the user's (in each home folder it may take: ssh
    takes the account's, not $HOME), then the system's."""
    if platform == "win32":
        data = environ.get("PROGRAMDATA") or "C:\\ProgramData"
        return [*(f"{home}\\.ssh\\config" for home in homes), f"{data}\\ssh\\ssh_config"]
    return [*(f"{home}/.ssh/config" for home in homes), "/etc/ssh/ssh_config"]


def ssh_host_matches(host: str, patterns: list[str]) -> bool:
    """ssh's `Host` patterns: `*` and `?`, read case-blind here (ssh is stricter: the safe side);
    one `!pattern` that matches rules the host out."""
    host, matched = host.casefold(), False
    for pattern in patterns:
        negated = pattern.startswith("!")
        if fnmatch.fnmatchcase(host, pattern.removeprefix("!").casefold().replace("[", "[[]")):
            if negated:
                return False
            matched = True
    return matched


@functools.lru_cache(maxsize=8)  # the user's and the system's files and a few included
def _choosing_lines(text: str) -> tuple[tuple[str, list[str] | None, str], ...]:
    """The lines of a configuration that choose the machine, split once (a file of 2,000 hosts is
    read for every host of a command): keyword, values (None: ssh refuses the line), the rest."""
    lines = []
    for line in text.split("\n"):  # ssh's lines end at a newline only (not at \r, \f or U+2028)
        keyword = ssh_line(line)
        if keyword is not None and keyword[0] in _SSH_CHOOSES:
            try:
                values: list[str] | None = ssh_values(keyword[1])
            except ValueError:
                values = None
            lines.append((keyword[0], values, keyword[1]))
    return tuple(lines)


def included_files(pattern: str, folder: str, budget: int) -> list[str] | None:
    """The files an `Include` names, in ssh's order, at most `budget` + 1 of them; None for a
    pattern with wildcards in more than one of its folders (`/proc/*/root/proc/*/x`: not walked)."""
    path = os.path.expanduser(pattern)
    path = path if os.path.isabs(path) else os.path.join(folder, path)
    if not glob.has_magic(path):
        return [path]
    if sum(glob.has_magic(part) for part in path.split(os.sep)) > 1:
        return None
    return sorted(itertools.islice(glob.iglob(path), budget + 1))


def ssh_host_names(host: str | None, text: str, folder: str, read: Callable[[str], str | None]) -> list[str]:
    """The host names that may apply to `host` in the configuration `text` (whose relative
    `Include`s are in `folder`, read by `read`), in ssh's order, up to the `HostName` that surely
    does; `%h` is the host. A ProxyCommand's hosts count too: its connection is the one ssh logs in
    over. `host` None: an ssh command another client completes (`rsync -e 'ssh -F cfg'`), where
    any block may apply. `*` where it cannot be told (too many files, a line ssh cannot split)."""
    found: list[str] = []
    budget = [SSH_FILES_READ]
    given = "*" if host is None else host

    def walk(text: str, applies: bool | None, depth: int) -> bool:  # True: a HostName surely applies
        state = applies  # True: the block applies; None: it may (a Match, or any host); False: it does not
        for key, values, rest in _choosing_lines(text):
            if state is False and key not in _BLOCKS:
                continue
            if values is None:  # an unclosed quote: ssh refuses the file
                found.append("*")
                return True
            if key == "host":
                state = None if host is None else ssh_host_matches(host, values)
            elif key == "match":
                state = True if [v.casefold() for v in values] == ["all"] else None
            elif state is False or not values:
                continue
            elif key == "include":
                for pattern in values:
                    files = included_files(pattern, folder, budget[0])
                    if files is None or len(files) > budget[0] or depth >= SSH_INCLUDE_DEPTH:
                        found.append("*")
                        return True
                    budget[0] -= len(files)
                    for one in files:
                        included = read(one)
                        if included is not None and walk(included, state, depth + 1):
                            return True
            elif key == "proxycommand":
                found.extend(command_hosts(rest.replace("%h", given)))
            else:  # HostName
                found.append(values[0].replace("%h", given).replace("%%", "%"))
                if state is True:
                    return True
        return False

    walk(text, True, 0)
    return found


@functools.cache
def _account_home() -> str | None:
    """The account's home folder, where ssh takes ~/.ssh from whatever $HOME says (POSIX)."""
    try:
        import pwd  # noqa: PLC0415 (POSIX only)

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):
        return None


def _homes() -> list[str]:
    account = _account_home()
    return list(dict.fromkeys([*([account] if account else []), os.path.expanduser("~")]))


def _read_ssh_file(path: str) -> str | None:
    return read_small_file(path, SSH_FILE_BYTES)


def _ssh_configs() -> list[tuple[str, str]]:
    """The user's and the system's ssh configuration files that exist, with their text."""
    found = ((path, _read_ssh_file(path)) for path in ssh_config_files(sys.platform, os.environ, _homes()))
    return [(path, text) for path, text in found if text is not None]


def aliased_here(host: str | None, text: str, path: str | None = None) -> bool:
    """Whether the ssh configuration `text` (of the file `path`; `ssh -F FILE`'s when None, whose
    relative includes ssh takes from ~/.ssh) may make `host` (`[user@]host`, `ssh://host:port`;
    None: any host) this machine (see `ssh_host_names`)."""
    folder = os.path.dirname(path) if path is not None else os.path.join(_homes()[0], ".ssh")
    plain = None if host is None else plain_host(host)
    return any(name == "*" or _named_here(name) for name in ssh_host_names(plain, text, folder, _read_ssh_file))


def command_reaches_here(command: str, host: str | None) -> bool:
    """Whether a command ssh connects through (ProxyCommand's, `%h` the host given) names this machine."""
    text = command.replace("%h", "*" if host is None else plain_host(host))
    return any("*" in piece or _named_here(piece) for piece in command_hosts(text))


def plain_host(host: str) -> str:
    """A host as ssh matches it against `Host`: no `user@`, an `ssh://` URL's host."""
    if _URL.match(host):
        host = url_host(host) or ""
    return host.rsplit("@", 1)[-1]


def host_name_here(value: str, host: str | None) -> bool:
    """Whether an ssh `HostName` setting's value (`-o HostName=X`, quoted or with `%h`, the host
    given) names this machine; the value is a name itself, never an alias (ssh does not read one)."""
    try:
        words = ssh_values(value)
    except ValueError:
        return True  # ssh refuses it; the safe side
    name = (words or [""])[0].replace("%h", "*" if host is None else plain_host(host)).replace("%%", "%")
    return "*" in name or _named_here(name)


def ssh_included(files: list[str] | None = None) -> list[str]:
    """The files (as glob patterns) the user's ssh configuration includes from anywhere
    (`Include ~/.colima/ssh_config`, OrbStack's, `config.d/*`), followed through what they include:
    a file written there is read by the next ssh as ~/.ssh/config is."""
    found: list[str] = []
    todo = [path for path in files or ssh_config_files(sys.platform, os.environ, _homes())[:-1]]
    while todo and len(found) < SSH_FILES_READ:
        path = todo.pop(0)
        text = _read_ssh_file(path)
        for key, values, _rest in _choosing_lines(text) if text is not None else ():
            for pattern in values or [] if key == "include" else []:
                expanded = os.path.expanduser(pattern)
                absolute = expanded if os.path.isabs(expanded) else os.path.join(os.path.dirname(path), expanded)
                if absolute not in found:
                    found.append(absolute)
                    todo += (included_files(pattern, os.path.dirname(path), SSH_FILES_READ) or [])[:SSH_FILES_READ]
    return found
