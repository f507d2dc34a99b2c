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

import functools
import glob
import ipaddress
import itertools
import os
import re
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
    given = plain_host(host)
    host = given.casefold().removeprefix("[").removesuffix("]").rstrip(".")
    if not host:
        return False
    if _named_here(host):
        return True
    names = dict.fromkeys([given, host])  # ssh matches `Host` against the host as given (`build.`, `ß`)
    return "*" not in host and any(aliased_here(n, text, path) for path, text in _ssh_configs() for n in names)


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
# takes the alias too. Read as ssh reads it (OpenSSH's readconf.c and misc.c, checked against
# `ssh -G` by a differential fuzzer, 2026-12-05): a line split as ssh splits it, the first
# `HostName`, `ProxyCommand` and `ControlPath` of a block that applies win; a `Match` block may
# apply (its conditions are not evaluated here); `Include` is followed; and where ssh reads its
# files a second time (`Match final`, `CanonicalizeHostname`), again for the host it then reaches.

SSH_INCLUDE_DEPTH = 16  # ssh's own limit of nested Include (readconf.c)
SSH_FILES_READ = 256  # files one lookup reads at most: past them, the host may be this machine
SSH_FILE_BYTES = 4 << 20  # ssh reads a file whole: past this much, which machine it reaches is not told
_TOO_LARGE = 'Host "\n'  # what such a file is read as: a line ssh cannot split (the host may be any)
_SSH_SPACE = " \t\r\n"  # what ends a keyword (misc.c's WHITESPACE); a value's words end at a space or a tab only
_SSH_DELIMITER = re.compile(r'[ \t\r\n"=]')
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")  # C's tolower
# The keywords that choose the machine reached: all others are skipped without splitting their values
_SSH_CHOOSES = frozenset({"host", "match", "include", "hostname", "proxycommand", "controlpath",
                          "canonicalizehostname", "canonicaldomains"})  # fmt: skip
# The words of a command (a ProxyCommand) that may name a host: `nc localhost 22`, `TCP:[::1]:22`,
# `/dev/tcp/127.0.0.1/22`; a number alone is taken for a port or a count
# A proxy's address in a command: nc's -x, ncat's --proxy, connect's -S and -H, socat's PROXY:HOST
_PROXY_VALUES = re.compile(r"(?:(?<=\s)-[xSH][ \t]*|--proxy(?:=|[ \t]+))\S+|(?i:\b(?:socks4a?|proxy):)[^:\s]+")
_HOST_PIECES = re.compile(r"\[([0-9A-Fa-f:.%\w]+)\]|([^\s:/,@=<>'\"()\[\];|&]+)")


def _skip_space(line: str, at: int) -> int:
    while at < len(line) and line[at] in _SSH_SPACE:
        at += 1
    return at


def _ssh_token(line: str, start: int) -> tuple[str | None, int]:
    """ssh's strdelim: the token at `start`, up to a space, a quote or one `=` (a quote takes the
    text to the next quote into it: `Host"Name"x` is `HostName`, then `x`), and where the rest
    starts (past the spaces and one `=` after it). None: a quote not closed."""
    found = _SSH_DELIMITER.search(line, start)
    if found is None:
        return line[start:], len(line)
    at = found.start()
    if line[at] == '"':
        close = line.find('"', at + 1)
        if close < 0:
            return None, len(line)
        return line[start:at] + line[at + 1 : close], _skip_space(line, close + 1)
    rest = _skip_space(line, at + 1)
    if line[at] != "=" and line[rest : rest + 1] == "=":
        rest = _skip_space(line, rest + 1)
    return line[start:at], rest


def ssh_line(line: str) -> tuple[str, str] | None:
    """A line of ssh's configuration as ssh reads it: its keyword (lower case) and the text after
    it; None for a blank line or a comment. ssh ends a line at a NUL too, drops the spaces and
    form feeds at its end, and skips one empty word first: `=HostName x` is a HostName line."""
    line = line.split("\0", 1)[0]
    end = len(line)
    while end > 1 and line[end - 1] in " \t\r\n\f":  # the first character is never dropped
        end -= 1
    line = line[:end]
    keyword, rest = _ssh_token(line, 0)
    if keyword == "":
        keyword, rest = _ssh_token(line, rest)
    if not keyword or keyword[0] in "\n#":
        return None
    return keyword.translate(_ASCII_LOWER), line[rest:].lstrip(_SSH_SPACE)


def ssh_values(text: str) -> list[str]:
    """The values after a keyword, split as ssh does (misc.c's argv_split): words end at a space or
    a tab only; quotes; a backslash before a quote, a backslash or (unquoted) a space escapes it,
    and is kept before anything else; a `#` that starts a word starts a comment. Raises ValueError
    for an unclosed quote (ssh refuses the file)."""
    if not re.search(r"[\\\"'#]", text):
        return [word for word in re.split(r"[ \t]+", text) if word]
    words: list[str] = []
    at = 0
    while at < len(text):
        if text[at] in " \t":
            at += 1
            continue
        if text[at] == "#":
            break
        quote, word = "", []
        while at < len(text):
            char, after = text[at], text[at + 1 : at + 2]
            if char == "\\" and (after in ("'", '"', "\\") or (not quote and after == " ")):
                word.append(after)
                at += 1
            elif char == "\\":
                word.append(char)
            elif not quote and char in " \t":
                break
            elif not quote and char in "\"'":
                quote = char
            elif quote and char == quote:
                quote = ""
            else:
                word.append(char)
            at += 1
        if quote:
            raise ValueError("no closing quotation")
        words.append("".join(word))
    return words


def ssh_expand(text: str, host: str) -> str:
    """A value with ssh's `%h` (the host) and `%%` read left to right (`%%h` is `%h`); another `%`
    token is left as it is (ssh refuses a HostName with one)."""
    return re.sub(r"%(.)", lambda m: host if m[1] == "h" else "%" if m[1] == "%" else m[0], text, flags=re.S)


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


@functools.lru_cache(maxsize=1024)
def _ssh_wildcards(pattern: bytes) -> re.Pattern[bytes]:
    pieces = re.split(rb"([*?])", pattern)
    return re.compile(b"".join({b"*": b".*", b"?": b"."}.get(p, re.escape(p)) for p in pieces), re.S)


def _ssh_pattern_matches(pattern: bytes, name: bytes) -> bool:
    """ssh's `*` and `?` (match.c's match_pattern), byte by byte: `?` is one byte of a UTF-8 name."""
    if b"*" not in pattern and b"?" not in pattern:
        return pattern == name
    return _ssh_wildcards(pattern).fullmatch(name) is not None


def ssh_host_matches(host: str, patterns: list[str]) -> bool | None:
    """ssh's `Host` patterns: `*` and `?`, on the name's UTF-8 bytes; one `!pattern` that matches
    rules the host out. ssh matches the host as given, case and all; here a pattern is also read
    case-blind (the safe side: None, the block may apply), a `!pattern` only as ssh reads it
    (`Host * !build` applies to `ssh BUILD`)."""
    name = host.encode("utf-8", "surrogateescape")
    matched: bool | None = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        given = pattern.removeprefix("!").encode("utf-8", "surrogateescape")
        if _ssh_pattern_matches(given, name):
            if negated:
                return False
            matched = True
        elif not negated and _ssh_pattern_matches(given.lower(), name.lower()):
            matched = matched or None
    return matched


def shared_control_path(path: str) -> bool:
    """A ControlPath one master connection answers for any host: no `%h`, `%C`, `%n` or `%k`."""
    return path.casefold() != "none" and not {m[1] for m in re.finditer(r"%(.)", path, flags=re.S)} & set("hCnk")


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


class _CannotTell(Exception):
    """ssh's reading cannot be followed here: the host may be any."""


class _SshReading:
    """One reading of ssh's configuration for a host (`ssh_host_names`): what it found, and which
    settings surely apply already (ssh takes the first value of each)."""

    def __init__(self, host: str | None, folder: str, read: Callable[[str], str | None]) -> None:
        self.given, self.folder, self.read = "*" if host is None else host, folder, read
        self.found: list[str] = []
        self.host_names: list[str] = []
        self.domains: list[str] = []
        self.budget = SSH_FILES_READ
        self.named = self.proxied = self.controlled = self.again = self.canonical = False

    def walk(self, text: str, host: str | None, applies: bool | None, depth: int, *, final: bool, never: bool) -> None:
        """Reads one file for `host` (None: any): `applies` True, the block it starts in applies;
        None, it may; False, it does not. `final`: ssh's second reading, where a HostName no longer
        counts; `never`: a file included from a block that does not apply, which ssh reads for its
        `Match final` only."""
        state = applies
        for key, values, rest in _choosing_lines(text):
            if never and key not in ("match", "include"):
                continue
            if state is False and key not in ("host", "match", "include"):
                continue
            if values is None:  # an unclosed quote: ssh refuses the file
                raise _CannotTell
            if key == "host":
                state = None if host is None else ssh_host_matches(host, values)
            elif key == "match":  # ssh reads every file again when any Match line says `final`
                self.again |= any(w.casefold() == "final" for v in values for w in v.split("="))
                state = True if [v.casefold() for v in values] == ["all"] else None
            elif key == "include":
                self.include(values, host, state, depth, final=final, never=never or state is False)
            elif not values:
                continue
            elif key == "hostname" and not final and not self.named:
                self.found.append(name := ssh_expand(values[0], self.given))
                self.host_names.append(name)
                self.named = state is True
            elif key == "proxycommand" and not self.proxied:
                self.found.extend(command_hosts(rest.replace("%h", self.given)))
                self.proxied = state is True
            elif key == "controlpath" and not self.controlled:
                if shared_control_path(values[0]):  # a master connection's, to any machine
                    raise _CannotTell
                self.controlled = state is True
            elif key == "canonicalizehostname" and not final and values[0].casefold() not in ("no", "false"):
                self.again = self.canonical = True
            elif key == "canonicaldomains" and not final:
                self.domains += values

    def include(self, values: list[str], host: str | None, state: bool | None, depth: int, *, final: bool,
                never: bool) -> None:  # fmt: skip
        for pattern in values:
            files = included_files(pattern, self.folder, self.budget)
            if files is None or len(files) > self.budget or depth >= SSH_INCLUDE_DEPTH:
                if never:  # ssh reads them for a `Match final` only: take that it has one
                    self.again = True
                    return
                raise _CannotTell
            self.budget -= len(files)
            for one in files:
                included = self.read(one)
                if included is not None:
                    self.walk(included, host, False if never else state, depth + 1, final=final, never=never)


def ssh_host_names(host: str | None, text: str, folder: str, read: Callable[[str], str | None]) -> list[str]:
    """The host names that may apply to `host` in the configuration `text` (whose relative
    `Include`s are in `folder`, read by `read`), in ssh's order, up to the `HostName` that surely
    does; `%h` is the host. A ProxyCommand's hosts count too: its connection is the one ssh logs in
    over. Where ssh reads its files again (`Match final`, `CanonicalizeHostname`), it does so for
    the host it reaches (the HostName's, or the host with a `CanonicalDomains` domain after it),
    which a `Host` block's ProxyCommand may match. `host` None: an ssh command another client
    completes (`rsync -e 'ssh -F cfg'`), where any block may apply. `*` where it cannot be told (too
    many files, a line ssh cannot split, a ControlPath one master answers for any host)."""
    reading = _SshReading(host, folder, read)
    try:
        reading.walk(text, host, True, 0, final=False, never=False)
        if host is not None and reading.again:
            reached = reading.host_names + ([] if reading.named else [host])
            canonical = [f"{name.rstrip('.')}.{d}" for name in reached for d in reading.domains if reading.canonical]
            reading.found += canonical  # `build` as `build.lan`, which /etc/hosts may name
            # ssh lowers a name's case (not an address's): each is read both ways
            for name in dict.fromkeys(n for one in reached + canonical for n in (one.translate(_ASCII_LOWER), one)):
                reading.walk(text, name, True, 0, final=True, never=False)
    except _CannotTell:
        reading.found.append("*")
    return reading.found


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


def read_ssh_file(path: str) -> str | None:
    """An ssh configuration file's text (None: not a regular file), whole: a `Host` alias past where
    a cut would stop counts (a review, 2026-12-05: a 256 KiB cut missed one)."""
    data = read_regular(path, SSH_FILE_BYTES + 1)
    if data is None:
        return None
    return _TOO_LARGE if len(data) > SSH_FILE_BYTES else data.decode("utf-8", errors="replace")


def _ssh_configs() -> list[tuple[str, str]]:
    """The user's and the system's ssh configuration files that exist, with their text."""
    found = ((path, read_ssh_file(path)) for path in ssh_config_files(sys.platform, os.environ, _homes()))
    return [(path, text) for path, text in found if text is not None]


def aliased_here(host: str | None, text: str, path: str | None = None) -> bool:
    """Whether the ssh configuration `text` (of the file `path`; `ssh -F FILE`'s when None, whose
    relative includes ssh takes from ~/.ssh) may make `host` (`[user@]host`, `ssh://host:port`;
    None: any host) this machine (see `ssh_host_names`)."""
    folder = os.path.dirname(path) if path is not None else os.path.join(_homes()[0], ".ssh")
    plain = None if host is None else plain_host(host)
    return any(name == "*" or _named_here(name) for name in ssh_host_names(plain, text, folder, read_ssh_file))


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
    name = ssh_expand((words or [""])[0], "*" if host is None else plain_host(host))
    return "*" in name or _named_here(name)


def ssh_included(files: list[str] | None = None) -> list[str]:
    """The files (as glob patterns) the user's ssh configuration includes from anywhere
    (`Include ~/.colima/ssh_config`, OrbStack's, `config.d/*`), followed through what they include:
    a file written there is read by the next ssh as ~/.ssh/config is."""
    found: list[str] = []
    todo = [path for path in files or ssh_config_files(sys.platform, os.environ, _homes())[:-1]]
    while todo and len(found) < SSH_FILES_READ:
        path = todo.pop(0)
        text = read_ssh_file(path)
        for key, values, _rest in _choosing_lines(text) if text is not None else ():
            for pattern in values or [] if key == "include" else []:
                expanded = os.path.expanduser(pattern)
                absolute = expanded if os.path.isabs(expanded) else os.path.join(os.path.dirname(path), expanded)
                if absolute not in found:
                    found.append(absolute)
                    todo += (included_files(pattern, os.path.dirname(path), SSH_FILES_READ) or [])[:SSH_FILES_READ]
    return found
