"""Work handed to a program outside the command's container (issue 21): ssh to this same machine
through programs other than ssh (rsync, scp, sftp, sshfs, mosh, autossh, git, GNU parallel, pssh,
ansible), and raw clients to a daemon's socket (curl, socat, nc). Each is held in plain words; the
same commands to another machine, or to a path in the project, keep the tier they had."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.classifier import Danger, Tier, classify
from tests.handoff_checks import held_outside

PROJECT = "/home/ana/project"
HANDOFF = "Asks the system to start a program later or elsewhere, outside Cowork Terminal's watch"


def _held(command: str, cwd: str = PROJECT) -> None:
    result = held_outside(command, cwd, deciding=True)
    assert HANDOFF in result.plain, result


@pytest.mark.parametrize(
    "command",
    [
        # rsync runs `rsync --server` (or what --rsync-path names) through ssh
        "rsync -a dir/ localhost:",
        "rsync --rsync-path='touch /tmp/x; rsync' localhost:/a b",
        "rsync -a dir/ user@127.0.0.1:/x",
        "rsync -av -e ssh dir/ '[::1]:x'",
        "rsync -a -e 'ssh -p 2222' dir/ localhost::module",  # a daemon started through ssh
        "rsync -a dir/ $(hostname):backup/",
        "rsync -a --chown 0:0 dir/ localhost:/srv",
        # scp, sftp, sshfs: scp or sftp-server on the other end
        "scp x localhost:",
        "scp localhost:x .",
        "scp -P 22 x scp://ana@localhost/tmp/",
        'scp x "$host":/tmp/',
        "sftp localhost",
        "sftp -b batch.txt ana@127.0.0.1",
        "sftp sftp://localhost/tmp",
        'sftp "$h"',
        "sshfs localhost:/ mnt",
        "sshfs -o reconnect ana@127.0.0.1:/home mnt",
        # mosh, autossh
        "mosh localhost",
        "mosh --ssh='ssh -p 2222' ana@localhost -- top",
        "autossh -M 0 localhost id",
        "autossh -M 20000 -f -N 127.0.0.1",
        "autossh -fM 0 localhost",
        # git over ssh: git-upload-pack / git-receive-pack (or what the options name) run on the other end
        "git clone localhost:/r",
        "git clone user@127.0.0.1:r",
        "git clone ssh://localhost/r",
        "git clone -b main -- git+ssh://ana@[::1]:22/srv/r.git dest",
        "git fetch localhost:/r",
        "git pull ssh://ana@127.0.0.1:22/srv/r.git main",
        "git push localhost:/r main",
        "git push --repo=localhost:/r",
        "git ls-remote localhost:/r",
        "git archive --remote=localhost:/r HEAD",
        "git archive --remote localhost:/r HEAD",
        "git clone --upload-pack='touch /tmp/x; git-upload-pack' localhost:/r",
        "git ls-remote -u 'touch /tmp/x; git-upload-pack' ana@localhost:r",
        "git push --receive-pack='touch /tmp/x; git-receive-pack' localhost:/r main",
        "git fetch --upload-pack=x '[::1]:r'",
        'git clone "$(hostname):r"',
        "git submodule add localhost:/r sub",
        # GNU parallel and pssh run their commands through ssh on each host
        "parallel -S localhost echo ::: a",
        "parallel --sshlogin 2/ana@127.0.0.1 echo ::: a",
        "parallel -S build.example,localhost echo ::: a",
        "parallel --sshlogin=localhost echo ::: a",
        "pssh -H localhost id",
        "pssh -H 'build.example 127.0.0.1:22' -i uptime",
        "parallel-ssh -H ana@localhost id",
        "pscp -H localhost x /tmp/x",
        # ansible: a host named in the inventory is reached through ssh unless the connection is local
        "ansible all -i 'localhost,' -c ssh -m shell -a id",
        "ansible all -i localhost, -m shell -a id",
        "ansible-playbook -i 127.0.0.1, site.yml",
        "ansible localhost --connection=ssh -m shell -a id",
        # raw clients to a daemon's socket outside the project
        "curl --unix-socket /var/run/docker.sock http://x/containers/json",
        "curl -s --unix-socket /run/podman/podman.sock -X POST http://d/v4.0.0/libpod/containers/create",
        "curl --abstract-unix-socket foo http://x/",
        "curl --unix-socket ../other/app.sock http://x/",
        'curl --unix-socket "$XDG_RUNTIME_DIR/bus" http://x/',
        "curl --unix /run/snapd.socket http://x/v2/snaps",
        "ln -s /var/run/docker.sock d.sock && curl --unix-socket d.sock http://x/containers/json",
        "socat - UNIX-CONNECT:/run/docker.sock",
        "socat - UNIX-CLIENT:/run/user/1000/bus",
        "socat - UNIX:/run/systemd/private",
        "socat STDIO ABSTRACT-CONNECT:/tmp/.X11-unix/X0",
        "socat - unix-connect:/var/run/docker.sock,retry=3",
        "socat - /var/run/docker.sock",
        "socat TCP-LISTEN:2375,fork UNIX-CONNECT:/var/run/docker.sock",
        "socat - SOCKET-CONNECT:1:0:x2f72756e2f646f636b65722e736f636b00",  # AF_UNIX, the path in hex
        "nc -U /run/docker.sock",
        "ncat -U /run/docker.sock",
        "ncat --unixsock /run/user/1000/bus",
        "nc -U -w 3 /var/run/docker.sock",
    ],
)
def test_a_handoff_to_this_machine_or_a_daemon_is_held_in_plain_words(command: str) -> None:
    _held(command)


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("rsync -a dir/ user@build.example:", Tier.MODERATE),
        ("rsync -a dir/ /tmp/x", Tier.MODERATE),
        ("rsync -a dir/ rsync://localhost/module", Tier.MODERATE),  # the daemon runs already: not through ssh
        ("rsync -a dir/ localhost::module", Tier.MODERATE),
        ("rsync -a --chown 0:0 dir/ /tmp/x", Tier.MODERATE),
        ('rsync -a "$src" "$dst"', Tier.MODERATE),
        ("scp x user@build.example:", Tier.MODERATE),
        ("scp ./a:b /tmp/x", Tier.MODERATE),
        ("sftp build.example", Tier.MODERATE),
        ("sshfs git@github.com:org mnt", Tier.MODERATE),
        ("mosh build.example", Tier.MODERATE),
        ("autossh -M 0 build.example", Tier.MODERATE),
        ("autossh -fM 0 -oMACs=hmac-sha2-256 build.example", Tier.MODERATE),  # -M's 0 is no host
        ("sftp -D /usr/lib/openssh/sftp-server localhost", Tier.MODERATE),  # a server run here, not through ssh
        ("mosh --local 127.0.0.1", Tier.MODERATE),
        ("scp -J localhost x build.example:", Tier.MODERATE),  # a jump through this machine starts no program
        ("git clone github.com:org/r", Tier.MODERATE),
        ("git clone git@github.com:org/r.git", Tier.MODERATE),
        ("git clone https://localhost/r", Tier.MODERATE),
        ("git clone /tmp/r.git", Tier.MODERATE),
        ("git clone file:///tmp/r.git", Tier.MODERATE),
        ("git clone --upload-pack=git-upload-pack /tmp/r.git", Tier.MODERATE),
        ("git push origin main", Tier.MODERATE),
        ("git push origin HEAD:main", Tier.MODERATE),
        ('git fetch origin "$branch":tmp', Tier.MODERATE),
        ("git fetch origin", Tier.MODERATE),
        ("git ls-remote github.com:org/r", Tier.SAFE),
        ("git archive --remote=github.com:org/r HEAD", Tier.MODERATE),
        ("parallel -S build.example echo ::: a", Tier.MODERATE),
        ("pssh -H build.example id", Tier.MODERATE),
        ("ansible localhost -m shell -a id", Tier.MODERATE),  # the implicit localhost: a local connection
        ("ansible all -i 'localhost,' -c local -m shell -a id", Tier.MODERATE),
        ("ansible all -i 'build.example,' -m ping", Tier.MODERATE),
        ("ansible-playbook -i localhost, -c local site.yml", Tier.MODERATE),
        ("curl https://example.com", Tier.MODERATE),
        ("socat - TCP:localhost:8080", Tier.MODERATE),
        ("socat UNIX-LISTEN:/tmp/x.sock -", Tier.MODERATE),
        ("nc localhost 8080", Tier.MODERATE),
        ("nc -lU /tmp/x.sock", Tier.MODERATE),
    ],
)
def test_the_same_commands_to_another_machine_or_the_project_keep_their_tier(command: str, tier: Tier) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.tier is tier, result
    assert result.danger is not Danger.OUTSIDE_WATCH


@pytest.mark.parametrize(
    "command",
    [
        "curl --unix-socket ./dev.sock http://x/",
        "curl --unix-socket run/api.sock http://x/",
        "socat - UNIX-CONNECT:./dev.sock",
        "nc -U ./dev.sock",
    ],
)
def test_a_socket_of_the_project_keeps_its_tier(tmp_path: Path, command: str) -> None:
    """A socket that is in the project now (a project that exists, not a folder of the system)."""
    (tmp_path / "run").mkdir()
    (tmp_path / "dev.sock").write_text("")
    (tmp_path / "run" / "api.sock").write_text("")
    result = classify(command, cwd=str(tmp_path))
    assert result.tier is Tier.MODERATE, result
    assert result.danger is not Danger.OUTSIDE_WATCH


def test_a_link_in_the_project_to_a_daemons_socket_is_held(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    os.symlink("/var/run/docker.sock", project / "d.sock")
    (project / "own.sock").write_text("")
    _held("curl --unix-socket d.sock http://x/containers/json", str(project))
    _held("nc -U d.sock", str(project))
    assert classify("curl --unix-socket own.sock http://x/", cwd=str(project)).tier is Tier.MODERATE


def test_hosts_read_from_a_file_are_looked_at(tmp_path: Path) -> None:
    (tmp_path / "local").write_text("# ours\nana@localhost:22\n")
    (tmp_path / "remote").write_text("build.example\nweb.example:2222\n")
    _held("pssh -h local id", str(tmp_path))
    _held("parallel --slf local echo ::: a", str(tmp_path))
    _held("pssh -h missing id", str(tmp_path))  # which machines cannot be told
    _held("echo localhost > remote; pssh -h remote id", str(tmp_path))  # written before it runs
    assert classify("pssh -h remote id", cwd=str(tmp_path)).tier is Tier.MODERATE
    assert classify("parallel --sshloginfile remote echo ::: a", cwd=str(tmp_path)).tier is Tier.MODERATE


def test_a_project_socket_is_not_in_the_project_when_the_command_runs_in_the_home_folder() -> None:
    home = os.path.expanduser("~")
    _held("curl --unix-socket .docker/run/docker.sock http://x/", home)


@pytest.mark.parametrize(
    "command",
    [
        # ssh's own HostName names the machine reached, whatever host is given (a red team, 2026-12-05)
        "ssh -o HostName=localhost x id",
        "ssh -oHostname=127.0.0.1 x id",
        'ssh -o "Hostname localhost" x id',
        "ssh h -o HostName=localhost id",  # ssh reads options after the host too
        "scp -o HostName=localhost x h:y",
        'rsync -e "ssh -o HostName=localhost" x h:y',
        'GIT_SSH_COMMAND="ssh -o HostName=localhost" git push h:r',
        'git -c core.sshCommand="ssh -o HostName=localhost" push h:r',
        "sshfs -o ssh_command='ssh -o HostName=localhost' h:/ mnt",
        "sshfs -o reconnect,HostName=localhost h:/ mnt",
        # the loopback names of /etc/hosts
        "ssh ip6-localhost id",
        "ssh ip6-loopback id",
        "ssh localhost6 id",
        "git push ip6-loopback:r",
        # a remote pointed at this machine: what pushes there later runs a program on it
        "git remote add l localhost:r && git push l",
        "git remote set-url origin localhost:r; git push",
        "git config remote.l.url localhost:r && git push l",
        "git -c url.localhost:.insteadOf=gh: push gh:r",
        'git -c "url.ssh://localhost/.pushInsteadOf=https://github.com/" push https://github.com/o/r',
        'git config url."localhost:".insteadOf https://github.com/ && git push https://github.com/o/r',
        "git clone -c remote.origin.pushurl=localhost:r https://github.com/o/r",
        # other ssh clients
        "curl sftp://localhost/x",
        "curl -T x sftp://localhost/tmp/x",
        "curl scp://localhost/x",
        "lftp sftp://localhost",
        "lftp -e 'put x' sftp://ana@localhost",
        "unison x ssh://localhost/y",
        "pdsh -w localhost id",
        "clush -w build.example,localhost id",
        "fab -H localhost cmd",
        "hg clone ssh://localhost/r",
        "svn co svn+ssh://localhost/r",
        "bzr push bzr+ssh://localhost/r",
        "darcs push localhost:r",
        "rdiff-backup x localhost::y",
        "borg init ssh://localhost/r",
        "restic -r sftp:localhost:/r init",
        "duplicity x sftp://localhost/y",
        "slogin localhost",
        "dbclient localhost id",
        "ssh-copy-id localhost",
    ],
)
def test_ssh_to_this_machine_by_its_settings_its_names_a_remote_or_another_client_is_held(command: str) -> None:
    _held(command)


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("ssh -o HostName=build.example x id", Tier.MODERATE),
        ("scp -o HostName=build.example x h:y", Tier.MODERATE),
        ("git remote add l build.example:r && git push l", Tier.MODERATE),
        ("git -c url.git@github.com:.insteadOf=https://github.com/ push https://github.com/o/r", Tier.MODERATE),
        ("git config get remote.l.url", Tier.SAFE),
        ("git remote set-url --delete l localhost:r", Tier.MODERATE),
        ("sshpass -p x ssh build.example id", Tier.MODERATE),
        ("curl sftp://build.example/x", Tier.MODERATE),
        ("lftp sftp://build.example", Tier.MODERATE),
        ("unison x ssh://build.example/y", Tier.MODERATE),
        ("pdsh -w build.example id", Tier.MODERATE),
        ("fab -H build.example cmd", Tier.MODERATE),
        ("hg clone ssh://build.example/r", Tier.MODERATE),
        ("hg status", Tier.MODERATE),
        ("svn co svn+ssh://build.example/r", Tier.MODERATE),
        ("darcs push build.example:r", Tier.MODERATE),
        ("rdiff-backup x build.example::y", Tier.MODERATE),
        ("borg init ssh://build.example/r", Tier.MODERATE),
        ("borg create /srv/repo::today x", Tier.MODERATE),
        ("restic -r sftp:build.example:/r init", Tier.MODERATE),
        ("duplicity x sftp://build.example/y", Tier.MODERATE),
        ("slogin build.example", Tier.MODERATE),
        ("ssh-copy-id build.example", Tier.MODERATE),
        ("parallel rg -S localhost ::: x", Tier.SAFE),  # rg's -S, not parallel's
        ("parallel -S build.example echo ::: a", Tier.MODERATE),
    ],
)
def test_the_same_clients_to_another_machine_keep_their_tier(command: str, tier: Tier) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.tier is tier, result
    assert result.danger is not Danger.OUTSIDE_WATCH


def test_parallels_command_after_its_options_is_judged_as_a_command() -> None:
    assert classify("parallel -j4 rm -rf ~ ::: x", cwd=PROJECT).tier is Tier.DESTRUCTIVE
    assert "-j4: not known to be read-only" not in classify("parallel -j4 echo ::: x", cwd=PROJECT).reasons


def test_ssh_to_an_address_of_this_machines_own_interfaces_is_held() -> None:
    try:
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
    except OSError:
        pytest.skip("no /proc/net/fib_trie here")
    pairs = zip(lines, lines[1:], strict=False)
    own = {before.strip()[3:].strip() for before, line in pairs if line.split() == ["/32", "host", "LOCAL"]}
    own = {a for a in own if not a.startswith("127.")}
    if not own:
        pytest.skip("no interface address but loopback")
    for address in sorted(own):
        _held(f"ssh {address} id")


@pytest.mark.parametrize("server", ["--server=[", "-s http://[::1", "--server=http://[::1"])
def test_a_server_not_closing_its_bracket_is_judged_and_not_a_failure(server: str) -> None:
    result = classify(f"kubectl {server} apply -f x", cwd=PROJECT)
    assert result.danger is not Danger.CANNOT_TELL, result
