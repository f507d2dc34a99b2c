"""hosts.py: which host is this machine, and where a word names one (issue 21). Its readers of
/etc/hosts and of Linux's interface tables are given files written here."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import pytest

from app.core.classifier import hosts
from app.core.classifier.words import _Word

FIB_TRIE = """Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 172.17.0.0/16 2 0 2
        |-- 172.17.0.0
           /16 link UNICAST
        |-- 172.17.0.1
           /32 host LOCAL
        |-- 172.17.255.255
           /32 link BROADCAST
     |-- 192.0.2.2
        /32 host LOCAL
"""
IF_INET6 = "fe8000000000000000fc00fffe000001 04 40 20 80     eth0\n00000000000000000000000000000001 01 80 10 80 lo\n"


def _word(text: str) -> _Word:
    return _Word(text, text, text)


def test_the_interface_addresses_are_the_local_entries_of_fib_trie_and_each_of_if_inet6(tmp_path: Path) -> None:
    (tmp_path / "fib_trie").write_text(FIB_TRIE)
    (tmp_path / "if_inet6").write_text(IF_INET6)
    found = hosts.interface_addresses(str(tmp_path / "fib_trie"), str(tmp_path / "if_inet6"))
    assert found == {ipaddress.ip_address(a) for a in ("172.17.0.1", "192.0.2.2", "fe80::fc:ff:fe00:1", "::1")}
    assert hosts.interface_addresses(str(tmp_path / "missing"), str(tmp_path / "missing")) == frozenset()


def test_a_hosts_file_gives_the_names_it_maps_to_a_loopback_address(tmp_path: Path) -> None:
    (tmp_path / "hosts").write_text(
        "127.0.0.1 localhost\n127.0.1.1 box.lan box # this one\n::1 ip6-loopback\n0.0.0.0 ads.example\n"
        "# 127.0.0.1 commented.example\n192.0.2.9 other.example\n"
    )
    assert hosts.loopback_names(str(tmp_path / "hosts")) == {"localhost", "box.lan", "box", "ip6-loopback",
                                                              "ads.example"}  # fmt: skip


def test_a_fifo_or_a_file_past_the_cap_is_not_read_whole(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opened non-blocking and not read: no writer would block the classifier
    assert hosts.read_small_file(str(fifo)) is None
    assert hosts.read_small_file(str(tmp_path)) is None  # a folder
    (tmp_path / "long").write_text("127.0.0.1 a\n" * 10 + "127.0.0.1 cut-in-two\n")
    assert hosts.read_small_file(str(tmp_path / "long"), limit=125) == "127.0.0.1 a\n" * 10


@pytest.mark.parametrize(
    "host",
    ["localhost", "LOCALHOST.", "me@localhost", "ip6-localhost", "ip6-loopback", "localhost6", "[::1]", "127.1",
     "0x7f000001", "0", "::", "::ffff:127.0.0.1"],
)  # fmt: skip
def test_this_machine_in_any_of_its_names_or_spellings(host: str) -> None:
    assert hosts.is_this_machine(host)


@pytest.mark.parametrize("host", ["build.example", "10.0.0.7", "2001:db8::1", "", "localhost.example"])
def test_another_machine_is_not_this_one(host: str) -> None:
    assert not hosts.is_this_machine(host)


def test_an_expansion_counts_as_this_machine_and_no_host_does_not() -> None:
    assert hosts.this_machine("*") and hosts.names_this_machine("*:22")
    assert not hosts.this_machine(None)
    assert hosts.remote_host(_Word(None, '"$h":/tmp', "*:/tmp")) == "*"


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("localhost:r", "localhost"),
        ("ana@box:r", "box"),
        ("[::1]:r", "::1"),
        ("ana@[::1]:r", "::1"),
        ("ssh://ana@localhost:2222/r", "localhost"),
        ("git+ssh://[::1]:22/r", "::1"),
        ("scp://h/x", "h"),
        ("sftp://h/x", "h"),
        ("svn+ssh://h/r", "h"),
        ("bzr+ssh://h/r", "h"),
        ("SSH://H/r", "H"),
        ("/tmp/a:b", None),
        ("./a:b", None),
        ("https://localhost/r", None),
        ("file:///tmp/r", None),
        ("localhost::module", None),  # an rsync daemon's, unless reached through ssh
        ("noport", None),
    ],
)
def test_the_host_of_an_ssh_remote(text: str, host: str | None) -> None:
    assert hosts.remote_host(_word(text)) == host


def test_urls_only_and_daemon_remotes() -> None:
    assert hosts.remote_host(_word("localhost:r"), urls_only=True) is None
    assert hosts.remote_host(_word("sftp://localhost/r"), urls_only=True) == "localhost"
    assert hosts.remote_host(_word("localhost::module"), daemon=True) == "localhost"
    assert hosts.remote_host(_word("rsync://localhost/m"), daemon=True) == "localhost"
    assert hosts.ssh_urls("open sftp://ana@localhost:22; get x; fish://h/") == ["localhost", "h"]


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("https://127.0.0.1:6443", "127.0.0.1"),
        ("localhost:6443", "localhost"),
        ("[::1]:6443/api", "::1"),
        ("http://[::1", None),  # a `[` not closed: urlsplit raised on it (kubectl -s)
        ("[", None),
        ("qemu+ssh://ana@build.example:22/system", "build.example"),
        ("qemu:///system", ""),
    ],
)
def test_the_host_of_a_server_or_a_url_of_any_kind(text: str, host: str | None) -> None:
    assert hosts.server_host(text) == host
